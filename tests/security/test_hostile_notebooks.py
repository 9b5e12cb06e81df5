"""Hostile notebooks through ``grader check`` as Gradescope runs it: each gets a clear
verdict (the file named, no points, no traceback, never the grader's crash), and IPython
syntax cannot hide code from the import scan nor run code the scan did not see. (What each
refusal says: tests/unit/test_notebook.py.)"""

import json
import subprocess
import sys

import nbformat
import pytest
from helpers.cli import run_cli
from helpers.paths import PE_SAMPLES, PE_TASK
from helpers.tasks import score_without
from nbformat.v4 import new_code_cell, new_notebook, new_output

CORRECT = open(f"{PE_SAMPLES}/correct_vectorized.py").read()


def notebook(*sources, **metadata) -> bytes:
    nb = new_notebook(cells=[new_code_cell(s) for s in sources])
    nb.metadata.update(metadata)
    return nbformat.writes(nb).encode()


def with_source(value) -> bytes:
    raw = json.loads(notebook("x = 1"))
    raw["cells"][0]["source"] = value
    return json.dumps(raw).encode()


def check(tmp_path, name: str, data: bytes) -> dict:
    path = tmp_path / name
    path.write_bytes(data)
    done = run_cli("check", PE_TASK, str(path), "--format", "json", "--others-work", timeout=120)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    return json.loads(done.stdout)


REFUSED = {
    "huge JSON nesting": b'{"nbformat": 4, "cells": [' + b"[" * 200_000 + b"]" * 200_000 + b"]}",
    "a source that is not text": with_source({"$ref": "#"}),
    "a null byte in a cell": with_source(CORRECT + "\x00"),
    "an R kernel": notebook(CORRECT, kernelspec={"name": "ir", "language": "R", "display_name": "R"}),
    "format 5": json.dumps(
        {
            "nbformat": 5,
            "nbformat_minor": 1,
            "metadata": {},
            "cells": [{"cell_type": "code", "source": CORRECT}],
        }
    ).encode(),
    "Python under a notebook's name": CORRECT.encode(),
}


@pytest.mark.parametrize("attack", sorted(REFUSED))
def test_a_hostile_notebook_gets_a_clear_verdict(tmp_path, attack):
    report = check(tmp_path, "mallory.ipynb", REFUSED[attack])
    assert report["score"] == 0 and report["status"] == "error"
    assert report["checks"][0]["message"].startswith("your file was not run: mallory.ipynb ")


def test_a_py_file_holding_a_notebook_is_not_run(tmp_path):
    report = check(tmp_path, "mallory.py", notebook(CORRECT))
    assert report["score"] == 0
    assert "holds a Jupyter notebook" in report["checks"][0]["message"]


def test_a_cell_magic_cannot_hide_code_that_runs(tmp_path):
    """%%bash's body is shell, not Python: the whole cell is left out, so neither its import
    nor its side effect happens (and the note says so)."""
    report = check(
        tmp_path, "mallory.ipynb", notebook(CORRECT, "%%bash\nimport os\nprint('BASH-CELL-RAN')\nos.getpid()")
    )
    assert report["score"] == score_without()
    assert "BASH-CELL-RAN" not in report["output"]
    assert "cell 2, the whole cell (it opens with the cell magic %%bash)" in report["checks"][0]["message"]


@pytest.mark.parametrize("magic", ["%%capture", "%%time", "%%timeit -n 1 import os"])
def test_a_body_that_runs_is_the_body_the_scan_reads(tmp_path, magic):
    """%%capture, %%time and %%timeit run their body (and %%timeit its setup): kept in the
    module, so the import the body makes is found and its print is shown, not swallowed."""
    report = check(
        tmp_path,
        "mallory.ipynb",
        notebook(CORRECT, f"{magic}\nimport os\nprint('CAPTURED-CELL-RAN')\nos.getpid()"),
    )
    imports = next(c for c in report["checks"] if c["name"] == "numpy-only")
    assert imports["status"] == "failed" and "os (cell 2, line" in imports["message"]
    assert "CAPTURED-CELL-RAN" in report["output"]


def test_the_display_helper_gives_nothing_new(tmp_path):
    """The helper that shows a cell's value is the module's own code: calling it, or
    replacing it, only prints; a forged display cannot hide an import from the scan."""
    report = check(
        tmp_path,
        "mallory.ipynb",
        notebook(
            CORRECT,
            "__grader_display__(__grader_display__.__defaults__)",
            "__grader_display__ = lambda v: None\n__import__('os')",
        ),
    )
    imports = next(c for c in report["checks"] if c["name"] == "numpy-only")
    assert imports["status"] == "failed"
    # its defaults are builtins and the task's display libraries' names, nothing more
    assert (
        "(<built-in function print>, <built-in function repr>, <class 'type'>, <class 'str'>, "
        "<built-in function any>, <class 'list'>, <class 'tuple'>, ('matplotlib', 'seaborn'))"
        in report["output"]
    )


def test_code_that_only_looks_like_a_magic_is_python_and_is_scanned(tmp_path):
    """A '%' that continues an expression is Python: kept, run and seen by the scan."""
    report = check(tmp_path, "mallory.ipynb", notebook(CORRECT, "flag = (3\n% 2)\nimport os"))
    imports = next(c for c in report["checks"] if c["name"] == "numpy-only")
    assert imports["status"] == "failed" and "os (cell 2, line 3)" in imports["message"]


def test_a_utf7_coding_line_in_a_cell_cannot_hide_an_import(tmp_path):
    """In a .py file this declaration is refused (tests/security/test_hostile_submissions.py);
    in a notebook a cell is text, and the line is a comment: what ran is what was scanned."""
    report = check(
        tmp_path, "mallory.ipynb", notebook("# coding: utf-7\n" + CORRECT + "\nx = 1 # +AAo-import os\n")
    )
    assert report["score"] == score_without()  # no import of os ran, none was hidden


def test_stored_outputs_are_not_an_answer(tmp_path):
    cell = new_code_cell("import numpy as np\nprint('not finished')", execution_count=1)
    cell.outputs = [new_output("stream", name="stdout", text="(5, 8)\n")]
    path = tmp_path / "mallory.ipynb"
    nbformat.write(new_notebook(cells=[cell]), str(path))
    done = run_cli("check", f"{PE_TASK}/../pe-table-shape", str(path), "--format", "json")
    report = json.loads(done.stdout)
    prints = next(c for c in report["checks"] if c["name"] == "prints-the-shape")
    assert prints["status"] == "failed" and report["output"].strip() == "not finished"


# --------------------------------------------------------------------------- documents that expand
# A hand-in's bytes are capped (1 MiB), but what the grader builds when it reads them is not,
# unless the reading is bounded (grader/submission/bounded.py, grader/submission/source_scan.py): an 866-byte
# notebook of format 3 whose heading has level 2*10^8 became gigabytes when converted, a
# 1 MiB file of `a;a;a;...` a syntax tree of 900 MiB, in the grader's own process.

GRADE_AND_MEASURE = """
import json, sys
from grader.grading.run import GradeOptions, grade
from grader.authoring import load_task
result = grade(load_task(sys.argv[1]), sys.argv[2], GradeOptions(others_work=True))
# The peak of this process's own memory (VmHWM): ru_maxrss would start at the forking
# parent's size (Linux carries it over exec), here the test run's, which grows with the
# frameworks it imported.
with open("/proc/self/status") as status:
    peak_kib = next(int(l.split()[1]) for l in status if l.startswith("VmHWM:"))
print(json.dumps({"report": result.to_dict(), "rss_mib": peak_kib / 1024}))
"""


def _v3_heading_bomb() -> bytes:
    cells = [
        {"cell_type": "heading", "level": level, "source": "x", "metadata": {}}
        for level in (200_000_000, 300_000_000)
    ]
    cells.append({"cell_type": "code", "input": CORRECT, "language": "python", "outputs": [], "metadata": {}})
    return json.dumps(
        {
            "nbformat": 3,
            "nbformat_minor": 0,
            "metadata": {"name": ""},
            "worksheets": [{"cells": cells, "metadata": {}}],
        }
    ).encode()


def _v4_deep_metadata_bomb() -> bytes:
    raw = json.loads(notebook(CORRECT))
    raw["metadata"]["x"] = None
    text = json.dumps(raw)
    return text.replace('"x": null', '"x": ' + "[" * 100_000 + "]" * 100_000).encode()


EXPANDING = {
    "a format-3 heading of level 2*10^8": ("mallory.ipynb", _v3_heading_bomb()),
    "a million-statement Python file": ("mallory.py", b"a;" * ((1 << 19) - 16)),
    "a million-name list": ("mallory.py", b"x = [" + b"a," * ((1 << 19) - 16) + b"]\n"),
    "deeply nested notebook metadata": ("mallory.ipynb", _v4_deep_metadata_bomb()),
}


@pytest.mark.parametrize("attack", sorted(EXPANDING))
def test_a_document_that_expands_costs_its_student_not_the_grader(tmp_path, attack):
    name, data = EXPANDING[attack]
    path = tmp_path / name
    path.write_bytes(data)
    assert len(data) <= 1 << 20
    done = subprocess.run(
        [sys.executable, "-c", GRADE_AND_MEASURE, PE_TASK, str(path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    measured = json.loads(done.stdout.splitlines()[-1])
    report = measured["report"]
    assert report["score"] == 0 and report["status"] == "error", report["checks"][0]
    assert report["checks"][0]["message"].startswith(f"your file was not run: {name} ")
    # An honest file leaves the grader at ~100 MiB; before the bound, these took it to 0.8-1.4 GiB.
    assert measured["rss_mib"] < 250, measured["rss_mib"]
