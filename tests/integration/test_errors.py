"""Errors that say what they are (issue 16): a broken task is found when it loads, named by
file, line and check, with exit 2; the grader's own failure is one line and exit 3; a path
the user named that cannot be written is named; the task's preparation is not the
student's time; a submission can come from standard input."""

import io
import json
import os
import re
import shutil

from helpers.cli import run_cli
from helpers.paths import PE_SAMPLES, PE_TASK

from grader import cli

SAMPLE = os.path.join(PE_SAMPLES, "correct_vectorized.py")


def broken_task(tmp_path, line_no: int, new_line: str):
    task = tmp_path / "task"
    shutil.copytree(PE_TASK, task)
    shutil.rmtree(task / "frozen")  # (cases generated from the broken spec, not frozen ones)
    lines = (task / "task.yaml").read_text().splitlines()
    lines[line_no - 1] = new_line
    (task / "task.yaml").write_text("\n".join(lines) + "\n")
    return task


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def assert_no_traceback(done):
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout, done.stderr[-2000:]


def test_an_empty_range_is_a_spec_problem_when_the_task_loads(tmp_path):
    spec = open(os.path.join(PE_TASK, "task.yaml")).read()
    at = line_of(spec, "d_model: {integers: {min: 1, max: 1024}}")
    task = broken_task(tmp_path, at, "      d_model: {integers: {min: 10, max: 1}}")
    for args in (["validate", str(task)], ["check", str(task), SAMPLE]):
        done = run_cli(*args)
        assert done.returncode == 2, done.stdout + done.stderr
        assert_no_traceback(done)
        assert f"task.yaml:{at}:" in done.stderr and "min 10 is above max 1" in done.stderr
        assert "spec OK" not in done.stdout


def test_a_range_emptied_by_a_reference_is_found_before_grading(tmp_path):
    spec = open(os.path.join(PE_TASK, "task.yaml")).read()
    at = line_of(spec, "max_len: {integers: {min: 1, max: 8192, max_product")
    task = broken_task(tmp_path, at, "      max_len: {integers: {min: {ref: d_model}, max: 3}}")
    env = {"GRADER_CACHE_DIR": str(tmp_path / "cache")}
    done = run_cli("check", str(task), SAMPLE, env=env)
    assert done.returncode == 2
    assert_no_traceback(done)
    assert "check 'table-shape': its cases cannot be generated" in done.stderr
    validated = run_cli("validate", str(task), env=env)
    assert validated.returncode == 1 and "BAD  table-shape" in validated.stdout
    assert_no_traceback(validated)


def test_a_reference_that_raises_names_the_case(tmp_path):
    task = tmp_path / "task"
    shutil.copytree(PE_TASK, task)
    shutil.rmtree(task / "frozen")
    reference = (
        (task / "reference.py")
        .read_text()
        .replace(
            "def sinusoidal_pe(max_len, d_model, base=10000.0):\n",
            "def sinusoidal_pe(max_len, d_model, base=10000.0):\n"
            "    if d_model == 7:\n        raise ValueError('odd widths not done')\n",
        )
    )
    (task / "reference.py").write_text(reference)
    done = run_cli("check", str(task), SAMPLE, env={"GRADER_CACHE_DIR": str(tmp_path / "cache")})
    assert done.returncode == 2
    assert_no_traceback(done)
    # which checks draw d_model=7 depends on the draws; every one that does names its line and case
    named = re.findall(
        r"task\.yaml:\d+: check '[\w-]+': the reference solution raised ValueError: "
        r"odd widths not done on sinusoidal_pe\([^)]*d_model=7",
        done.stderr,
    )
    assert named, done.stderr
    assert len(done.stderr) < 5000  # arrays are named by shape, not printed


def test_an_internal_error_is_one_line_and_exit_3(monkeypatch, capsys):
    def broken(*args, **kwargs):
        raise RuntimeError("the grader tripped")

    monkeypatch.setattr("grader.cli.check_grading.grade", broken)  # (check_grading imports grade at its top)
    assert cli.main(["check", PE_TASK, SAMPLE]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error (RuntimeError: the grader tripped)" in err


def test_paths_the_user_names_are_named_when_they_cannot_be_written(tmp_path):
    done = run_cli("check", PE_TASK, SAMPLE, "-o", "/proc/no-such-dir/report.txt")
    assert done.returncode == 2 and "/proc/no-such-dir" in done.stderr
    assert_no_traceback(done)
    junit = tmp_path / "reports" / "nested" / "junit.xml"  # a folder that is not there yet
    course = os.path.join(os.path.dirname(PE_TASK), "..", "examples", "course")
    done = run_cli("ci", course, "--junit", str(junit))
    assert done.returncode == 0, done.stderr[-2000:]
    assert junit.read_text().startswith("<?xml")


def test_making_the_cases_is_not_the_students_time(tmp_path):
    """A cold cache and a budget of one second: the cases are generated outside it."""
    done = run_cli(
        "check",
        PE_TASK,
        SAMPLE,
        "--submission-seconds",
        "1",
        "--format",
        "json",
        env={"GRADER_CACHE_DIR": str(tmp_path / "cold")},
    )
    report = json.loads(done.stdout)
    assert report["score"] == report["max_score"], [
        c["message"] for c in report["checks"] if c["status"] != "passed"
    ]


def test_a_submission_from_standard_input(monkeypatch, capsys):
    with open(SAMPLE, "rb") as f:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(f.read())))
    assert cli.main(["check", PE_TASK, "-", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["submission"] == "<stdin>" and report["score"] == report["max_score"]
