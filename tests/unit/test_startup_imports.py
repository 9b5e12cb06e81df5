"""What a command imports before it can fail: ``grader --help`` and a command line that is
wrong import the command line's grammar and little else, never the grading stack (numpy,
Hypothesis, the checks, the HTML page's modules, Dask, the integrations). Every run of the
grader pays its imports; a student's typo should not cost a second of numpy and checks.

Seen with ``python -X importtime`` in a fresh interpreter, which lists every module imported.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# A module is heavy when its name is one of these or lies under one of them.
HEAVY = (
    "numpy",
    "hypothesis",
    "dask",
    "grader.grading.run",
    "grader.grading.checks",
    "grader.report.html",
    "grader.integrations",
)


def imported(*args: str) -> tuple[list[str], subprocess.CompletedProcess[str]]:
    """The modules ``python -m grader ARGS`` imports, in order, and how it ended."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "grader", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=ROOT),
        timeout=60,
    )
    names = [
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    ]
    return names[1:], done  # (the first is the header: "imported package")


def heavy(names: list[str]) -> list[str]:
    """The heavy modules among ``names``, numpy's own submodules left out (numpy says it)."""
    found = {n for n in names if any(n == h or n.startswith(h + ".") for h in HEAVY)}
    return sorted(n for n in found if not n.startswith("numpy."))


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["--version"],
        ["check", "--help"],
        ["check", "/nonexistent.py"],  # no submission given: a usage error
        ["check", "tasks/positional-encoding", "/nonexistent.py", "--memory-mib", "x"],
    ],
    ids=" ".join,
)
def test_help_and_usage_errors_import_no_grading_stack(args):
    names, done = imported(*args)
    assert "grader.cli.parser" in names, done.stderr[-2000:]  # (the listing was read)
    assert done.returncode in (0, 2), done.stderr[-2000:]
    assert heavy(names) == [], f"grader {' '.join(args)} imports {heavy(names)}"


def test_the_command_line_s_common_parts_load_no_grading_stack():
    """What every family imports at its top (common.py: GradeOptions, exit codes) stays light,
    so that a family loads the grading stack only when its own module asks for it."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, grader.cli.common, grader.cli.dispatch, grader.cli.parser; "
            "print('\\n'.join(sys.modules))",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=ROOT),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert heavy(done.stdout.split()) == []


def test_the_head_start_reads_its_limits_without_the_grading_stack():
    """grader check's head start (grading/prestart.py) reads task.yaml's limits and imports
    with the reader's own parse (task_yaml.read_head), before numpy and the checks."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, grader.grading.prestart; from grader.task.task_yaml import read_head; "
            "assert read_head('tasks/positional-encoding').limits; print('\\n'.join(sys.modules))",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=ROOT),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "grader.task.task_yaml" in done.stdout.split()
    assert heavy(done.stdout.split()) == []


def test_control_the_grading_command_does_import_them():
    """The listing does see the stack when a command needs it (checking a file loads the
    task, which needs the check kinds): the tests above are not passing on an empty list."""
    names, done = imported("check", "tasks/positional-encoding", "/nonexistent.py")
    assert done.returncode == 2, done.stderr[-2000:]
    assert "no such file" in done.stderr
    assert "numpy" in names and "grader.grading.checks" in names


# What grading one file in the text format needs: no page, no class, no platform, and no
# Hypothesis for a frozen task (its cases are read, not drawn).
NOT_FOR_ONE_FILE = (
    "hypothesis",
    "dask",
    "distributed",
    "grader.report.html",
    "grader.integrations",
    "grader.classroom",
    "grader.task.hypothesis_driver",
)
# ... but for the export formats' registry, which the command line's grammar lists (light: it
# imports nothing; the class's modules stay out)
ONE_FILE_MAY_IMPORT = ("grader.classroom", "grader.classroom.export_formats")


WRONG_NORMALIZE = "import numpy as np\n\ndef normalize_rows(m):\n    return np.asarray(m, dtype=float) * 2\n"
SHRINKING = ("hypothesis", "grader.task.hypothesis_driver")  # a failure on a full task is shrunk


@pytest.mark.parametrize(
    "task, submission, allowed",
    [
        ("tasks/positional-encoding", "submissions/positional-encoding/correct_vectorized.py", ()),
        # a failure is shrunk to its smallest input, with Hypothesis: allowed, nothing else
        (
            "tasks/positional-encoding",
            "submissions/positional-encoding/mistake_sin_cos_swapped.py",
            SHRINKING,
        ),
        # a student's kit: frozen cases and no reference, so nothing to shrink with either
        ("examples/course/tasks/normalize-rows", "examples/course/solutions/normalize-rows.py", ()),
        ("examples/course/tasks/normalize-rows", None, ()),
    ],
    ids=["correct", "buggy", "kit-correct", "kit-wrong"],
)
def test_checking_a_file_on_a_frozen_task_imports_only_what_it_uses(task, submission, allowed, tmp_path):
    if submission is None:
        submission = str(tmp_path / "wrong.py")
        (tmp_path / "wrong.py").write_text(WRONG_NORMALIZE)
    names, done = imported("check", task, submission)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    assert "grader.grading.run" in names  # (it did grade)
    unused = sorted(
        {
            n
            for n in names
            if any(n == h or n.startswith(h + ".") for h in NOT_FOR_ONE_FILE)
            and not any(n == a or n.startswith(a + ".") for a in allowed)
            and n not in ONE_FILE_MAY_IMPORT
        }
    )
    assert unused == [], f"grader check {os.path.basename(submission)} imports {unused}"
