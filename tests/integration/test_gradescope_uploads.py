"""`grader gradescope` names the file(s) students must upload (issue 35 C2), as
docs/integrations.md says it does: one task with or without --file."""

import os

from helpers.cli import run_cli
from helpers.paths import ROOT

TASK = os.path.join(ROOT, "tasks", "pe-row-length")


def _built(tmp_path, *args):
    done = run_cli(
        "gradescope", TASK, *args, "-o", str(tmp_path / "autograder.zip"), "--offline", timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "autograder.zip").is_file()
    return done.stdout


def test_one_task_without_file_says_what_students_upload(tmp_path):
    said = _built(tmp_path)
    line = next(line for line in said.splitlines() if line.startswith("students upload:"))
    assert "one .py or .ipynb file" in line
    assert "solution" in line and "submission" in line and "main" in line


def test_one_task_with_file_names_it(tmp_path):
    said = _built(tmp_path, "--file", "row_length.py")
    assert "students upload: row_length.py (exactly so named)" in said
