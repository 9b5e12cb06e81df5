"""Helpers for the tests of notebooks and scripts that plot (display libraries, issue 24):
a task that allows matplotlib, notebooks built from cells, and a grade in one mode (a tier
with fresh workers by ``grader check``, or with warm ones as one file of a ``grader batch``),
by this checkout's grader or by another install's (``program``: a virtualenv without
matplotlib, conftest.py's ``container``)."""

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from helpers.cli import run_cli
from helpers.paths import PE_SAMPLES, PE_TASK, ROOT

SHAPE_TASK = os.path.join(ROOT, "tasks", "pe-table-shape")
PLOTTING_NOTEBOOK = os.path.join(PE_SAMPLES, "correct_notebook_plots_the_table.ipynb")
DRAWING_NOTEBOOK = os.path.join(
    ROOT, "submissions", "pe-table-shape", "correct_notebook_draws_the_table.ipynb"
)
IMPORTS_CHECK = "numpy-only"  # positional-encoding's imports check
SHAPE_IMPORTS_CHECK = "allowed-imports"
MUTATION_CHECK = "add-leaves-input-unchanged"
TIMEOUT = 600


def task_allowing(folder, *also: str, display=None) -> str:
    """positional-encoding with ``also`` allowed besides numpy (and ``display`` as its
    display libraries, when given); its cases are generated (the freeze holds for the
    task as shipped)."""
    folder = str(folder)
    if not os.path.isdir(folder):
        shutil.copytree(PE_TASK, folder, ignore=shutil.ignore_patterns("frozen"))
        path = os.path.join(folder, "task.yaml")
        with open(path) as f:
            text = f.read()
        allowed = ", ".join(("numpy",) + also)
        text = text.replace(
            "  allowed: [numpy]\n",
            f"  allowed: [{allowed}]\n"
            + (f"  display: [{', '.join(display)}]\n" if display is not None else ""),
        )
        with open(path, "w") as f:
            f.write(text)
    return folder


def write_notebook(path, *sources) -> str:
    """A notebook of code cells (a source starting ``# md`` is a markdown cell)."""
    cells = [new_markdown_cell(s[4:]) if s.startswith("# md") else new_code_cell(s) for s in sources]
    nbformat.write(new_notebook(cells=cells), str(path))
    return str(path)


def code_cells(path) -> list[str]:
    return [c.source for c in nbformat.read(str(path), as_version=4).cells if c.cell_type == "code"]


def without_plots(sources: list[str]) -> list[str]:
    """The same cells with every plotting line (and matplotlib's import) left out."""
    kept = []
    for source in sources:
        lines = [
            line
            for line in source.splitlines()
            if not re.search(r"\bplt\b|\bfig\b|\bax\b|\bmesh\b|matplotlib|%matplotlib", line)
        ]
        if any(line.strip() for line in lines):
            kept.append("\n".join(lines))
    return kept


def grade(tmp_path, mode, task: str, path, program=None) -> dict:
    """The JSON report of ``path`` graded for ``task`` in ``mode`` (helpers.tiers.Mode: a tier,
    warm or not), by ``program`` (a ``grader`` executable) or this checkout's grader."""
    path = str(path)
    limits = ["--isolation", str(mode)]
    if getattr(mode, "warm", False):
        batch = Path(tempfile.mkdtemp(prefix="batch-", dir=tmp_path))  # (one per grade)
        folder = batch / "class"
        folder.mkdir()
        shutil.copy(path, folder / os.path.basename(path))
        out = batch / "out"
        done = _grader(
            program, "batch", task, str(folder), "--out", str(out), "--jobs", "1", "--force", *limits
        )
        assert done.returncode in (0, 1), done.stderr[-3000:]
        [line] = (out / f"reports-{_task_id(task)}.jsonl").read_text().splitlines()
        report = json.loads(line)
    else:
        done = _grader(program, "check", task, path, "--format", "json", *limits)
        assert done.returncode in (0, 1), done.stderr[-3000:]
        report = json.loads(done.stdout)
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert report["isolation"] == str(mode)
    return report


def _task_id(task: str) -> str:
    with open(os.path.join(task, "task.yaml")) as f:
        return re.search(r"^id:\s*(\S+)", f.read(), re.M).group(1)


def _grader(program, *args):
    if program is None:
        return run_cli(*args, timeout=TIMEOUT)
    return subprocess.run(
        [program, *args], capture_output=True, text=True, cwd=ROOT, timeout=TIMEOUT, env=dict(os.environ)
    )


def by_name(report) -> dict:
    return {c["name"]: c for c in report["checks"]}


def grader_without_matplotlib(container) -> str:
    """The ``grader`` of conftest.py's ``container``: the grader installed as a course
    installs it (``pip install`` of this tree, no test extras), which has no matplotlib."""
    python = os.path.join(container["bin"], "python")
    found = subprocess.run(
        [
            python,
            "-c",
            "import importlib.util, sys; sys.exit(importlib.util.find_spec('matplotlib') is not None)",
        ]
    )
    assert found.returncode == 0, "the plain install has matplotlib: the test would not test absence"
    return os.path.join(container["bin"], "grader")
