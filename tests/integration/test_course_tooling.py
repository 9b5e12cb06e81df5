"""Course tooling: Gradescope, JUnit, course-repository CI, hidden checks; one score
whatever the route."""

import json
import os
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import yaml
from helpers.cli import run_cli
from helpers.paths import INSTRUCTOR_TASKS, PE_SAMPLES, PE_TASK, ROOT
from helpers.tasks import (
    IGNORES_BASE_LOSES,
    WRONG_NORMALIZE,
    course_with_full_tasks,
    make_task,
    score_without,
)

COURSE = os.path.join(ROOT, "examples", "course")
BAD = os.path.join(PE_SAMPLES, "mistake_ignores_base.py")


def test_gradescope_results_json(tmp_path):
    out = tmp_path / "results.json"
    done = run_cli("check", PE_TASK, BAD, "--format", "gradescope", "--output", str(out))
    assert done.returncode == 1 and done.stdout == ""
    results = json.loads(out.read_text())
    assert {"score", "execution_time", "output", "tests"} <= set(results)
    assert "max_score" not in results  # not a top-level key of Gradescope's specification
    assert results["output_format"] == results["test_output_format"] == "text"
    assert results["score"] == score_without(*IGNORES_BASE_LOSES)
    assert sum(t["max_score"] for t in results["tests"]) == score_without()
    for test in results["tests"]:
        assert {"name", "score", "max_score", "status", "output", "visibility"} <= set(test)
        assert test["status"] in ("passed", "failed")
    failed = [t for t in results["tests"] if t["name"].startswith("table-custom-base")][0]
    assert failed["status"] == "failed" and "failing input: sinusoidal_pe(" in failed["output"]


HIDDEN_TASK = """
id: hidden-square
title: Square every entry
version: 1
functions:
  square: [x]
imports: {allowed: [numpy]}
checks:
  - name: visible-case
    kind: example
    call: square
    args: {x: {array: {value: [1.0, 2.0]}}}
  - name: hidden-case
    kind: example
    hidden: true
    call: square
    args: {x: {array: {value: [4321.5, 8765.25]}}}
"""


def test_gradescope_shows_hidden_checks_as_the_task_says(tmp_path):
    """hidden_visibility (task.yaml) is each hidden check's visibility in results.json
    (after the due date unless the task says otherwise); visible checks stay visible."""
    solution = tmp_path / "solution.py"
    solution.write_text("def square(x):\n    return x * x\n")
    for visibility in (None, "after_due_date", "after_published", "hidden"):
        text = HIDDEN_TASK + (f"hidden_visibility: {visibility}\n" if visibility else "")
        task = make_task(tmp_path / f"task-{visibility}", text)
        out = tmp_path / f"results-{visibility}.json"
        done = run_cli("check", task, str(solution), "--format", "gradescope", "--output", str(out))
        assert done.returncode == 0, done.stderr
        tests = {t["name"]: t for t in json.loads(out.read_text())["tests"]}
        assert tests["hidden-case"]["visibility"] == (visibility or "after_due_date")
        assert tests["hidden-case"]["max_score"] == tests["hidden-case"]["score"] == 1
        assert tests["visible-case"]["visibility"] == "visible"


def test_a_kit_of_a_task_that_sets_hidden_visibility_loads_and_grades(tmp_path):
    task = make_task(tmp_path / "hidden-square", HIDDEN_TASK + "hidden_visibility: after_published\n")
    assert run_cli("freeze", task).returncode == 0
    done = run_cli("kit", task, "-o", str(tmp_path / "kits"))
    assert done.returncode == 0, done.stderr
    kit = tmp_path / "kits" / "hidden-square"
    assert "hidden-case" not in (kit / "task.yaml").read_text()
    solution = tmp_path / "solution.py"
    solution.write_text("def square(x):\n    return x * x\n")
    done = run_cli("check", str(kit), str(solution), "--format", "gradescope")
    assert done.returncode == 0, done.stderr
    assert [t["name"] for t in json.loads(done.stdout)["tests"] if t["visibility"] != "hidden"] == [
        "visible-case"
    ]


def test_check_grades_the_named_file_of_an_upload(tmp_path):
    """--file NAME (what run_autograder passes for a task): that file, exactly; missing, a
    results.json that names it and what was uploaded, with 0 of the task's points."""
    upload = tmp_path / "submission"
    upload.mkdir()
    shutil.copy(BAD, upload / "encoding.py")
    shutil.copy(os.path.join(PE_SAMPLES, "correct_vectorized.py"), upload / "other.py")
    out = tmp_path / "results.json"
    done = run_cli(
        "check", PE_TASK, str(upload), "--file", "encoding.py", "--format", "gradescope", "--output", str(out)
    )
    assert done.returncode == 1, done.stderr
    assert json.loads(out.read_text())["score"] == score_without(*IGNORES_BASE_LOSES)
    done = run_cli(
        "check", PE_TASK, str(upload), "--file", "solution.py", "--format", "gradescope", "--output", str(out)
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    results = json.loads(out.read_text())
    assert results["score"] == 0
    assert "no file named solution.py was handed in" in results["output"]
    assert "encoding.py, other.py" in results["output"]
    [test] = results["tests"]
    assert test["max_score"] == score_without() and test["visibility"] == "visible"
    for wrong in ("../solution.py", "notes.txt"):
        done = run_cli("check", PE_TASK, str(upload), "--file", wrong)
        assert done.returncode == 2 and "--file:" in done.stderr, done.stderr


def test_gradescope_refuses_files_of_unknown_tasks_and_odd_names(tmp_path):
    tasks = [os.path.join(ROOT, "tasks", t) for t in ("pe-table-shape", "pe-batch-sum")]
    zip_path = tmp_path / "autograder.zip"
    for files, said in (
        (["--file", "pe-nothing=a.py"], "TASK_ID one of pe-table-shape, pe-batch-sum"),
        (["--file", "pe-batch-sum=../a.py"], "not a plain file name"),
        (["--file", "pe-batch-sum=a.py", "--file", "pe-batch-sum=b.py"], "given two files"),
        (["--samples", str(tmp_path)], "--samples goes with one task"),
    ):
        done = run_cli("gradescope", *tasks, *files, "-o", str(zip_path))
        assert done.returncode == 2 and said in done.stderr, done.stderr
        assert "Traceback" not in done.stderr and not zip_path.exists()
    done = run_cli("gradescope", tasks[0], tasks[0], "-o", str(zip_path))
    assert done.returncode == 2 and "given twice" in done.stderr


def test_junit_marks_failures_and_errors():
    done = run_cli(
        "check", PE_TASK, os.path.join(PE_SAMPLES, "broken_wrong_function_name.py"), "--format", "junit"
    )
    suite = ET.fromstring(done.stdout).find("testsuite")
    assert suite.get("name") == "positional-encoding"
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert cases["loads"].find("failure") is not None
    assert cases["add-2d"].find("skipped") is not None
    assert cases["exponent-2i-over-d"].find("failure") is None
    assert int(suite.get("failures")) == 1 and int(suite.get("skipped")) == 7


def test_submission_may_be_a_folder_with_one_file(tmp_path):
    folder = tmp_path / "upload"
    folder.mkdir()
    shutil.copy(BAD, folder / "anything.py")
    done = run_cli("check", PE_TASK, str(folder), "--format", "json")
    assert json.loads(done.stdout)["score"] == score_without(*IGNORES_BASE_LOSES)
    shutil.copy(BAD, folder / "other.py")
    done = run_cli("check", PE_TASK, str(folder))
    assert done.returncode == 2 and "holds 2 .py or .ipynb files" in done.stderr


def _workflow_grade_command():
    workflow = yaml.safe_load(open(os.path.join(COURSE, ".github", "workflows", "grade.yml")))
    steps = workflow["jobs"]["grade"]["steps"]
    command = [s["run"] for s in steps if s.get("name") == "Grade"][0]
    argv = shlex.split(command)
    assert argv[0] == "grader"
    from grader.sandbox import tier

    if not tier("bubblewrap").works():  # the workflow makes bwrap work on its runner; here it cannot
        argv.remove("--require-sandbox")
    return [sys.executable, "-m", "grader"] + argv[1:]


def _run_course(course, tmp_path):
    summary = tmp_path / "summary.md"
    env = dict(os.environ, GITHUB_ACTIONS="true", GITHUB_STEP_SUMMARY=str(summary), PYTHONPATH=ROOT)
    done = subprocess.run(
        _workflow_grade_command(), cwd=course, env=env, capture_output=True, text=True, timeout=300
    )
    return done, summary


def test_example_course_passes_with_the_workflows_own_command(tmp_path):
    course = tmp_path / "course"
    shutil.copytree(COURSE, course)
    done, summary = _run_course(course, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "normalize-rows  5/5  passed" in done.stdout  # the kit: public checks only
    assert "| normalize-rows | 5/5 | passed |" in summary.read_text()
    suite = ET.parse(course / "grader-junit.xml").getroot().find("testsuite")
    assert suite.get("failures") == "0" and suite.get("errors") == "0"


def test_failing_course_annotates_and_fails_the_build(tmp_path):
    course = course_with_full_tasks(tmp_path / "course")
    (course / "solutions" / "normalize-rows.py").write_text(WRONG_NORMALIZE)
    done, summary = _run_course(course, tmp_path)
    assert done.returncode == 1
    annotations = [line for line in done.stdout.splitlines() if line.startswith("::error ")]
    assert annotations and all("file=solutions/normalize-rows.py,line=4," in a for a in annotations)
    # The hidden check counts, but neither the log nor the summary reveals its inputs.
    hidden = [a for a in annotations if "zero-rows" in a]
    assert hidden and "hidden check" in hidden[0] and "Failing input" not in hidden[0]
    text = summary.read_text()
    assert "below the required 80%" in text and "zero-rows" in text
    assert "np.full" not in text.split("zero-rows", 1)[1].split("\n", 1)[0]


def test_local_ci_says_why_each_task_lost_points(tmp_path):
    """Below its score line, every failed check with its message and failing input, as a
    student sees them in `grader check` (a hidden check says only that it failed)."""
    course = course_with_full_tasks(tmp_path / "course")
    (course / "solutions" / "normalize-rows.py").write_text(WRONG_NORMALIZE)
    done = run_cli("ci", str(course), env={"GITHUB_ACTIONS": "false"}, timeout=300)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("FAIL  normalize-rows"))
    assert lines[at + 1].startswith(
        "      input-untouched: your function changed its argument `m` in place: at ["
    )
    assert lines[at + 2].startswith("        failing input: normalize_rows(m=np.")
    assert lines[at + 3] == (
        "      zero-rows: failed (hidden check: its inputs and expected values are not shown)"
    )
    assert lines[at + 4].startswith("total ")


def test_missing_solution_scores_zero(tmp_path):
    course = tmp_path / "course"
    shutil.copytree(COURSE, course)
    os.remove(course / "solutions" / "normalize-rows.py")
    done, _ = _run_course(course, tmp_path)
    assert done.returncode == 1
    assert "normalize-rows  0/5  error" in done.stdout


def test_hidden_checks_are_redacted_for_students_and_shown_to_staff(tmp_path):
    task = os.path.join(INSTRUCTOR_TASKS, "normalize-rows")
    path = tmp_path / "s.py"
    path.write_text(WRONG_NORMALIZE)
    student = json.loads(run_cli("check", task, str(path), "--format", "json").stdout)
    staff = json.loads(run_cli("check", task, str(path), "--format", "json", "--staff").stdout)
    hidden_student = [c for c in student["checks"] if c["name"] == "zero-rows"][0]
    hidden_staff = [c for c in staff["checks"] if c["name"] == "zero-rows"][0]
    assert hidden_student["status"] == hidden_staff["status"] == "failed"
    assert hidden_student["score"] == hidden_staff["score"] == 0
    assert hidden_student["failing_input"] is None and "hidden check" in hidden_student["message"]
    assert hidden_staff["failing_input"].startswith("normalize_rows(m=")
    assert student["score"] == staff["score"]


def test_same_score_from_check_gradescope_and_ci(tmp_path):
    course = tmp_path / "course"
    shutil.copytree(COURSE, course)
    solution = course / "solutions" / "normalize-rows.py"
    solution.write_text(WRONG_NORMALIZE)
    task = str(course / "tasks" / "normalize-rows")
    check = json.loads(run_cli("check", task, str(solution), "--format", "json").stdout)["score"]
    out = tmp_path / "gs.json"
    run_cli("check", task, str(solution), "--format", "gradescope", "--output", str(out))
    gradescope = json.loads(out.read_text())["score"]
    _run_course(course, tmp_path)
    suite = ET.parse(course / "grader-junit.xml").getroot().find("testsuite")
    ci = float(suite.find("properties/property").get("value").split("/")[0])
    klass = tmp_path / "class"
    klass.mkdir()
    shutil.copy(solution, klass / "student.py")
    run_cli("batch", task, str(klass), "--out", str(tmp_path / "out"))
    batch = float(open(tmp_path / "out" / "grades-normalize-rows.csv").read().splitlines()[1].split(",")[1])
    assert check == gradescope == ci == batch
