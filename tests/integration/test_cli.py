"""The grader command as students, instructors and CI use it: output, formats, exit codes."""

import json
import os

from helpers.cli import run_cli
from helpers.paths import PE_SAMPLES, PE_TASK
from helpers.tasks import as_cell, make_task, score_without

GOOD = os.path.join(PE_SAMPLES, "correct_vectorized.py")
BAD = os.path.join(PE_SAMPLES, "mistake_sin_cos_swapped.py")


def test_full_marks_exits_0_with_plain_text_when_piped():
    done = run_cli("check", PE_TASK, GOOD)
    assert done.returncode == 0, done.stderr
    full = as_cell(score_without())
    assert f"Score: {full}/{full} (100%)" in done.stdout
    assert "\x1b[" not in done.stdout  # no colour codes in a pipe
    assert "isolation:" in done.stdout


def test_below_full_marks_exits_1_and_shows_the_failure():
    done = run_cli("check", PE_TASK, BAD)
    assert done.returncode == 1
    assert "FAIL  sin-even-cos-odd" in done.stdout
    assert "failing input: sinusoidal_pe(" in done.stdout


def test_colour_can_be_forced():
    done = run_cli("check", PE_TASK, BAD, "--color", "always")
    assert "\x1b[31mFAIL" in done.stdout


def test_json_report_follows_the_contract():
    done = run_cli("check", PE_TASK, BAD, "--format", "json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert {"task", "submission", "score", "max_score", "status", "isolation", "checks"} <= set(report)
    assert report["task"] == "positional-encoding"
    assert report["status"] == "failed"
    assert report["isolation"] in ("bubblewrap", "landlock", "rlimits")
    for check in report["checks"]:
        assert {"name", "status", "score", "max_score", "message"} <= set(check)
        assert check["status"] in ("passed", "failed", "error", "skipped")
    assert report["score"] == sum(c["score"] for c in report["checks"])
    failing = [c for c in report["checks"] if c["name"] == "sin-even-cos-odd"][0]
    assert failing["status"] == "failed" and failing["score"] == 0


def test_json_status_error_when_nothing_can_be_graded():
    done = run_cli("check", PE_TASK, os.path.join(PE_SAMPLES, "broken_syntax_error.py"), "--format", "json")
    assert done.returncode == 1
    assert json.loads(done.stdout)["status"] == "error"


def test_missing_submission_exits_2_with_reason():
    done = run_cli("check", PE_TASK, "no/such/file.py")
    assert done.returncode == 2
    assert "no/such/file.py: no such file" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_missing_task_exits_2():
    done = run_cli("check", "tasks/nope", GOOD)
    assert done.returncode == 2
    assert "no such task folder" in done.stderr


def test_bad_arguments_exit_2():
    done = run_cli("check", PE_TASK)
    assert done.returncode == 2
    assert "usage:" in done.stderr
    done = run_cli("check", PE_TASK, GOOD, "--call-seconds", "-1")
    assert done.returncode == 2 and "must be positive" in done.stderr


def test_validate_passes_on_the_bundled_task():
    done = run_cli("validate", PE_TASK, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 problems" in done.stdout
    full = as_cell(score_without())
    assert f"reference scores {full}/{full}" in done.stdout


def test_validate_fails_when_a_sample_lies_about_its_verdict(tmp_path):
    samples = tmp_path / "samples"
    samples.mkdir()
    (samples / "liar.py").write_text("# expect: full marks\n" + open(BAD).read())
    done = run_cli("validate", PE_TASK, "--samples", str(samples), timeout=300)
    assert done.returncode == 1
    assert "declared full marks but scored" in done.stdout
    assert "sin-even-cos-odd" in done.stdout


NEGATIVE_REFUSED = """
id: square
title: Square
version: 1
functions:
  square: [x]
checks:
  - name: one-case
    kind: example
    call: square
    args: {x: {array: {value: [1.0, 2.0]}}}
  - name: negative-case
    kind: example
    call: square
    args: {x: {array: {value: [-1.0, 2.0]}}}
"""
REFUSES_NEGATIVES = """
import numpy as np

def square(x):
    x = np.asarray(x, dtype=float)
    if (x < 0).any():
        raise ValueError("negative input")
    return x ** 2
"""


def test_validate_counts_in_words(tmp_path):
    """One case, two problems (not frozen; the reference raises on a case): said as such."""
    task = make_task(tmp_path / "task", NEGATIVE_REFUSED, REFUSES_NEGATIVES)
    done = run_cli("validate", task)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "ok   one-case: 1 case\n" in done.stdout
    assert "BAD  negative-case: the reference solution raised ValueError: negative input" in done.stdout
    assert done.stdout.endswith("\n1 ok, 2 problems\n"), done.stdout


def test_a_repeated_skip_reason_is_said_once(pe_task):
    done = run_cli("check", PE_TASK, os.path.join(PE_SAMPLES, "broken_syntax_error.py"))
    assert done.stdout.count("skipped: your file did not load") == 1
    assert done.stdout.count("SKIP  ") == len(pe_task.checks)  # every check, shown once each


BAD_KIND = """
id: square
title: Square
version: 1
functions:
  square: [x]
checks:
  - name: values
    kind: nope
    call: square
    args:
      x: {array: {shape: [3]}}
    cases: 5
"""


def test_cli_reports_spec_problems_with_exit_2(tmp_path):
    folder = make_task(tmp_path / "task", BAD_KIND)
    submission = tmp_path / "s.py"
    submission.write_text("def square(x):\n    return x * x\n")
    done = run_cli("check", folder, str(submission))
    assert done.returncode == 2
    assert "the task spec has problems" in done.stderr
    assert "task.yaml:8: checks[0].kind" in done.stderr
    assert "Traceback" not in done.stderr
