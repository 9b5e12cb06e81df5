"""GitHub runners: annotations as the runner parses them (escaped, workspace-relative,
capped at GitHub's limit with a notice), JUnit that links to the student's code, and an
example workflow that makes bubblewrap work on ubuntu-24.04."""

import csv
import os
import shutil
import subprocess
import sys

import pytest
from helpers.paths import ROOT
from helpers.tasks import WRONG_NORMALIZE, course_with_full_tasks
from helpers.workflow_commands import parse_command, run_step, workflow_steps

COURSE = os.path.join(ROOT, "examples", "course")
INSTRUCTOR = os.path.join(ROOT, "examples", "course-instructor")
FINAL_GRADING = os.path.join(INSTRUCTOR, ".github", "workflows", "final-grading.yml")


def test_ci_annotations_in_a_course_below_the_repository_root(tmp_path):
    repo = tmp_path / "repo"
    course = course_with_full_tasks(repo / "course")
    (course / "solutions" / "normalize-rows.py").write_text(WRONG_NORMALIZE)
    env = dict(
        os.environ,
        GITHUB_ACTIONS="true",
        GITHUB_WORKSPACE=str(repo),
        PYTHONPATH=ROOT,
        GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"),
    )
    done = subprocess.run(
        [sys.executable, "-m", "grader", "ci", "course", "--min-score", "80"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    commands = [parse_command(line) for line in done.stdout.splitlines() if line.startswith("::")]
    assert commands and all(
        props["file"] == "course/solutions/normalize-rows.py" for _, props, _ in commands
    ), commands


# --------------------------------------------------------------------------- JUnit

RAISES = """import numpy as np
print("imported <ok> & \\x1b[2J")

def normalize_rows(m):
    print("rows:", len(m), "]]>")
    raise ValueError("no </failure> here")
"""


def test_junit_cases_carry_file_line_and_what_the_code_printed(tmp_path):
    import xml.etree.ElementTree as ET

    repo = tmp_path / "repo"
    course = course_with_full_tasks(repo / "course")
    (course / "solutions" / "normalize-rows.py").write_text(RAISES)
    env = dict(os.environ, GITHUB_WORKSPACE=str(repo), PYTHONPATH=ROOT)
    env.pop("GITHUB_STEP_SUMMARY", None)
    done = subprocess.run(
        [sys.executable, "-m", "grader", "ci", "course", "--junit", "junit.xml"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    suite = ET.parse(repo / "junit.xml").getroot().find("testsuite")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert all(c.get("file") == "course/solutions/normalize-rows.py" for c in cases.values())
    visible = [c for c in cases.values() if c.find("failure") is not None and c.get("name") != "zero-rows"]
    assert visible and all(c.get("line") == "6" for c in visible)  # the raise, not the def
    assert all(c.find("system-out").text.startswith("rows: ") for c in visible)
    assert "]]>" in visible[0].find("system-out").text  # escaped, not a CDATA break
    # A hidden check links to the file but shows nothing it printed.
    assert cases["zero-rows"].find("failure") is not None
    assert cases["zero-rows"].find("system-out") is None and cases["zero-rows"].get("line") != "6"
    passed = [c for c in cases.values() if c.find("failure") is None and c.find("error") is None]
    assert all(c.get("line") is None for c in passed)
    out = suite.find("system-out").text  # printed at import
    assert out.startswith("imported <ok> & \\x1b[2J") and "\x1b" not in out


# --------------------------------------------------------------------------- --require-sandbox


def _fake_bwrap(tmp_path, complaint="bwrap: setting up uid map: Permission denied"):
    path = tmp_path / "bwrap"
    path.write_text(f"#!/bin/sh\necho '{complaint}' >&2\nexit 1\n")
    path.chmod(0o755)
    return str(path)


def _sysctls(tmp_path, **values):
    root = tmp_path / "sys"
    for name, value in values.items():
        file = root.joinpath(*name.split("__"))
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(f"{value}\n")
    root.mkdir(exist_ok=True)
    return str(root)


def test_refusal_names_the_apparmor_restriction_and_the_sysctl(tmp_path, monkeypatch):
    from grader.sandbox import SandboxUnavailable, choose_tier, tier, userns

    root = _sysctls(tmp_path, kernel__apparmor_restrict_unprivileged_userns=1)
    text = userns.why_bubblewrap_fails(root, _fake_bwrap(tmp_path))
    assert "AppArmor" in text and "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0" in text
    # Through the tier choice --require-sandbox makes, as the command prints it.
    monkeypatch.setattr(userns, "SYSCTL", root)
    monkeypatch.setattr(tier("bubblewrap"), "works", lambda: False)
    with pytest.raises(SandboxUnavailable, match="apparmor_restrict_unprivileged_userns=0"):
        choose_tier("bubblewrap")


def test_refusal_quotes_bwrap_when_user_namespaces_fail_otherwise(tmp_path):
    from grader.sandbox import userns

    bwrap = _fake_bwrap(tmp_path)
    text = userns.why_bubblewrap_fails(
        _sysctls(tmp_path, kernel__apparmor_restrict_unprivileged_userns=0), bwrap
    )
    assert "cannot create user namespaces" in text and "setting up uid map: Permission denied" in text
    assert "AppArmor" in text and "kernel.apparmor_restrict_unprivileged_userns=0" in text
    text = userns.why_bubblewrap_fails(_sysctls(tmp_path, kernel__unprivileged_userns_clone=0), bwrap)
    assert "kernel.unprivileged_userns_clone=1" in text


def test_require_sandbox_without_bwrap_says_how_to_install_it(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    env = dict(os.environ, PATH=str(empty), PYTHONPATH=ROOT)
    done = subprocess.run(
        [sys.executable, "-m", "grader", "ci", COURSE, "--require-sandbox"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "bwrap is not installed" in done.stderr and "apt-get install bubblewrap" in done.stderr
    assert "Traceback" not in done.stderr


# --------------------------------------------------------------------------- the example workflow


def _workflow():
    import yaml

    with open(os.path.join(COURSE, ".github", "workflows", "grade.yml"), encoding="utf-8") as f:
        return yaml.safe_load(f)


def test_workflow_validate_step_passes_on_the_example_course():
    import glob
    import shlex

    from grader.sandbox import tier

    run = next(
        s["run"]
        for s in _workflow()["jobs"]["grade"]["steps"]
        if s.get("run", "").startswith("grader validate ")
    )
    argv = [
        part
        for word in shlex.split(run)[1:]
        for part in (sorted(glob.glob(word, root_dir=COURSE)) if "*" in word else [word])
    ]
    if not tier("bubblewrap").works():
        argv.remove("--require-sandbox")
    done = subprocess.run(
        [sys.executable, "-m", "grader", *argv],
        cwd=COURSE,
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, PYTHONPATH=ROOT),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "task normalize-rows" in done.stdout and "0 problems" in done.stdout


# --------------------------------------------------------------------------- final grading


def test_final_grading_collects_with_grader_collect_never_a_checkout_and_cp():
    """The collection that followed links (a checkout, then ``[ -e solutions/...]`` and ``cp``: see
    test_collect.py's control test) must never come back; the token never sits in a
    script (GitHub writes a step's script to a file on the runner)."""
    steps = workflow_steps(FINAL_GRADING)
    scripts = [s["run"] for s in steps if "run" in s]
    for script in scripts:
        for forbidden in ("cp ", "git clone", "git checkout", "solutions/", "students.txt", "${{ secrets."):
            assert forbidden not in script, (forbidden, script)
    order = ["grader validate ", "grader collect ", "grader batch ", "grader export "]
    at = [next(i for i, text in enumerate(scripts) if command in text) for command in order]
    assert at == sorted(at), scripts
    collect = next(s for s in steps if "grader collect " in s.get("run", ""))
    assert "--roster roster.csv" in collect["run"] and "{env:STUDENT_REPOS_TOKEN}" in collect["run"]
    assert collect["env"]["STUDENT_REPOS_TOKEN"] == "${{ secrets.STUDENT_REPOS_TOKEN }}"
    export = next(s["run"] for s in steps if "grader export " in s.get("run", ""))
    for part in ("--roster roster.csv", "--collection collected/collection.csv", "--format canvas"):
        assert part in export


def test_final_grading_workflow_runs_here_on_real_repositories_and_grades_every_roster_student(tmp_path):
    """The workflow's own steps, run as the runner runs them, in a copy of the instructor's
    repository, with its roster; github.com is this machine's folder (git's insteadOf), the
    token a fake one that must appear nowhere."""
    from helpers.student_repos import Link, StudentRepo

    from grader.classroom.roster import load_roster
    from grader.sandbox import tier

    instructor = tmp_path / "instructor"
    shutil.copytree(INSTRUCTOR, instructor)
    github = tmp_path / "github"
    students = load_roster(str(instructor / "roster.csv")).students
    assert len(students) >= 4 and all(s.extra.get("repo") for s in students)
    with open(os.path.join(COURSE, "solutions", "normalize-rows.py")) as f:
        correct = f.read()
    hand_ins = [
        {"solutions/normalize-rows.py": correct},
        {"solutions/normalize-rows/solution.py": correct},
        {"solutions/normalize-rows.py": Link("../../tasks/normalize-rows/reference.py")},
    ]
    for student, files in zip(students, hand_ins):  # (the last student's repository: none)
        StudentRepo(github / f"{student.extra['repo']}.git").commit(files, "2026-11-20T10:00:00Z")
    token = "ghp_FAKE0final0grading0token0000001"
    outputs = tmp_path / "github-output"
    env = {
        "PATH": f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}",
        "PYTHONPATH": ROOT,
        "GITHUB_OUTPUT": str(outputs),
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": f"url.{github}/.insteadOf",
        "GIT_CONFIG_VALUE_0": f"https://x-access-token:{token}@github.com/",
    }
    values = {
        "secrets.STUDENT_REPOS_TOKEN": token,
        "inputs.deadline": "",
        "vars.FINAL_DEADLINE": "2026-12-01T00:00:00Z",
    }
    sandbox = tier("bubblewrap").works()
    logs = ""
    for step in workflow_steps(FINAL_GRADING):
        if "run" not in step or step["name"].startswith(("Install", "Let bubblewrap", "Fail the run")):
            continue
        if not sandbox:
            step = dict(step, run=step["run"].replace(" --require-sandbox", ""))
        done = run_step(step, instructor, values, env)
        logs += done.stdout + done.stderr
        assert done.returncode == 0, (step["name"], done.stdout + done.stderr)
    assert "unreachable=1" in outputs.read_text()  # so the last step fails the run
    grades = list(csv.DictReader(open(instructor / "grades" / "grades-normalize-rows.csv", encoding="utf-8")))
    by_id = {r["student"]: r for r in grades}
    assert list(by_id) == [s.submission_id for s in students]
    full = by_id[students[0].submission_id]["max_score"]
    assert [by_id[s.submission_id]["score"] for s in students] == [full, full, "0", ""]
    assert [by_id[s.submission_id]["collection"] for s in students] == [
        "collected",
        "collected",
        "refused",
        "unreachable",
    ]
    assert "symbolic link" in by_id[students[2].submission_id]["collection_note"]
    canvas = list(csv.reader(open(instructor / "grades" / "canvas-normalize-rows.csv", encoding="utf-8")))
    assert [row[1] for row in canvas[2:]] == [s.lms_id for s in students]
    assert token not in logs
    for root, _, names in os.walk(instructor):
        for name in names:
            with open(os.path.join(root, name), "rb") as f:
                assert token.encode() not in f.read(), os.path.join(root, name)


# --------------------------------------------------------------------------- the kits on students' machines

KITS = os.path.join(COURSE, ".github", "workflows", "kits.yml")
SHIM = os.path.join(ROOT, "tests", "without_posix")  # a Python as on macOS or Windows (test_unsandboxed.py)


def _kits_step(prefix):
    return next(s for s in workflow_steps(KITS, job="kits") if s.get("name", "").startswith(prefix))


def test_the_kits_workflow_runs_on_linux_macos_and_windows_set_up_as_grade_yml_is():
    import re

    import yaml

    with open(KITS, encoding="utf-8") as f:
        flow = yaml.safe_load(f)
    grade = _workflow()
    job, graded = flow["jobs"]["kits"], grade["jobs"]["grade"]["steps"]
    assert job["runs-on"] == "${{ matrix.os }}"
    assert job["strategy"] == {
        "fail-fast": False,
        "matrix": {"os": ["ubuntu-latest", "macos-latest", "windows-latest"]},
    }
    assert job["defaults"] == {"run": {"shell": "bash"}}  # Git for Windows' bash on windows-latest
    assert flow[True] == grade[True] and flow["permissions"] == grade["permissions"]  # (YAML 1.1: on)
    assert [s for s in job["steps"] if "uses" in s] == [s for s in graded if "uses" in s][:2]
    url = re.search(
        r'pip install "(git\+https://[^"]+)"',
        next(s["run"] for s in graded if "pip install" in s.get("run", "")),
    )
    assert f'python -m pip install "{url.group(1)}"' in _kits_step("Install the grader")["run"]
    with open(os.path.join(COURSE, ".gitattributes"), encoding="utf-8") as f:
        assert "tasks/** -text" in f.read().splitlines()  # a kit's bytes survive a Windows checkout


def _here(**extra):
    return {
        "PATH": f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": ROOT,
        **extra,
    }


def test_the_kits_workflow_check_step_passes_here_and_where_no_sandbox_can_start():
    step = _kits_step("Check each kit")
    done = run_step(step, COURSE, {"matrix.os": "ubuntu-latest"}, _here())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "::group::normalize-rows (solutions/normalize-rows.py)" in done.stdout
    assert "Score: 5/5" in done.stdout and "(isolation: unsandboxed)" not in done.stdout
    done = run_step(
        step, COURSE, {"matrix.os": "windows-latest"}, _here(PYTHONPATH=f"{SHIM}{os.pathsep}{ROOT}")
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "(isolation: unsandboxed)" in done.stdout and "Score: 5/5" in done.stdout


def test_the_kits_workflow_fails_below_full_marks_and_without_a_solution(tmp_path):
    course = tmp_path / "course"
    shutil.copytree(COURSE, course)
    step = _kits_step("Check each kit")
    solution = course / "solutions" / "normalize-rows.py"
    solution.write_text(WRONG_NORMALIZE)
    done = run_step(step, course, {"matrix.os": "macos-latest"}, _here())
    assert done.returncode == 1, done.stdout + done.stderr
    assert "::error::normalize-rows: grader check exited 1 on macos-latest (0 is full marks)" in done.stdout
    solution.unlink()
    done = run_step(step, course, {"matrix.os": "macos-latest"}, _here())
    assert done.returncode == 1 and "::error::normalize-rows: no solution" in done.stdout, done.stdout
    (course / "solutions" / "normalize-rows").mkdir()  # a solution folder, as grader ci takes one
    shutil.copy(
        os.path.join(COURSE, "solutions", "normalize-rows.py"), solution.parent / "normalize-rows" / "a.py"
    )
    done = run_step(step, course, {"matrix.os": "macos-latest"}, _here())
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow  # a virtualenv
def test_the_kits_workflow_installs_the_wheel_grader_kit_wrote_and_checks_with_it(tmp_path):
    """The workflow's own steps in a course whose kits `grader kit` wrote (with the grader's
    wheel beside them), in a fresh virtualenv: the wheel is what gets installed and checks
    the kits, sandboxed here and unsandboxed where no sandbox can start; grade.yml's
    validate step still sees only the kits."""
    from helpers.built import clean_env, fresh_venv

    course = tmp_path / "course"
    shutil.copytree(COURSE, course)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "kit",
            os.path.join(INSTRUCTOR, "tasks", "normalize-rows"),
            "-o",
            "tasks",
        ],
        cwd=course,
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, PYTHONPATH=ROOT),
    )
    assert done.returncode == 0, done.stderr
    python = fresh_venv(str(tmp_path / "venv"))
    env = {
        "PATH": f"{os.path.dirname(python)}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": "",
        "PIP_NO_INDEX": "1",
    }
    done = run_step(_kits_step("Install the grader"), course, {}, env)
    assert done.returncode == 0, done.stdout + done.stderr
    installed = subprocess.run(
        [python, "-c", "import grader; print(grader.__file__)"],
        cwd=course,
        capture_output=True,
        text=True,
        env=clean_env(),
    )
    assert installed.stdout.startswith(str(tmp_path / "venv")), installed.stdout + installed.stderr
    for pythonpath, isolation in (("", None), (SHIM, "unsandboxed")):
        done = run_step(
            _kits_step("Check each kit"),
            course,
            {"matrix.os": "macos-latest"},
            dict(env, PYTHONPATH=pythonpath),
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert ("(isolation: unsandboxed)" in done.stdout) == (isolation is not None)
    from grader.sandbox import tier

    validate = next(
        s
        for s in workflow_steps(os.path.join(COURSE, ".github", "workflows", "grade.yml"))
        if "grader validate" in s.get("run", "")
    )
    if not tier("bubblewrap").works():
        validate = dict(validate, run=validate["run"].replace(" --require-sandbox", ""))
    done = run_step(validate, course, {}, env)
    assert done.returncode == 0 and "0 problems" in done.stdout, done.stdout + done.stderr
