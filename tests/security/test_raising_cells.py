"""A notebook runs cell by cell, as Jupyter runs it with errors allowed (issue 35 item 3):
a cell that raises is reported (its number, the student's own line, the error) and the next
cell runs; what was defined is graded, and a function a failed cell left undefined costs
only its own checks. What a student who wants the points tries with that: a raising cell
that hides a wrong redefinition or a patched numpy, an exception that fights being shown,
BaseException and exits, thousands of failing cells, a string opened in one cell and closed
in another. A plain .py file is one program and keeps today's rule."""

import json
import re

import nbformat
import pytest
from helpers.cli import run_cli
from helpers.paths import PE_SAMPLES, PE_TASK
from helpers.tasks import score_without
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from grader.authoring import load_task
from grader.records.statuses import OK
from grader.sandbox.inside import protocol, wire
from grader.sandbox.replies import outcome_from_reply

CORRECT = open(f"{PE_SAMPLES}/correct_vectorized.py").read()
HEAD, _, TAIL = CORRECT.partition("def add_positional_encoding")
ADDS = tuple(c.name for c in load_task(PE_TASK).checks if c.call == "add_positional_encoding")


def write(tmp_path, name, *cells) -> str:
    path = tmp_path / name
    nbformat.write(
        new_notebook(cells=[c if not isinstance(c, str) else new_code_cell(c) for c in cells]), str(path)
    )
    return str(path)


def run(path, tier=None, *extra):
    isolation = ("--isolation", tier) if tier else ()
    return run_cli("check", PE_TASK, path, *isolation, *extra, timeout=300)


def graded(path, tier=None) -> tuple[dict, str]:
    done = run(path, tier, "--format", "json")
    assert done.returncode in (0, 1), done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    return json.loads(done.stdout), done.stdout


def checks(report) -> dict:
    return {c["name"]: c for c in report["checks"]}


def test_a_trailing_scratch_cell_costs_nothing_and_is_named_in_the_students_words(tmp_path, plain_tier):
    path = write(tmp_path, "hw.ipynb", new_markdown_cell("# Homework"), CORRECT, "print(undefined_value)")
    report, raw = graded(path, plain_tier)
    assert report["score"] == score_without()
    loads = report["checks"][0]
    assert loads["status"] == "failed" and loads["score"] == 0 and loads["max_score"] == 0
    assert (
        "cell 3 raised NameError: name 'undefined_value' is not defined: print(undefined_value)"
        in loads["message"]
    )
    assert "__grader_display__" not in raw


def test_a_failing_experiment_before_the_work_still_grades_the_work(tmp_path, plain_tier):
    path = write(tmp_path, "hw.ipynb", "import numpy as np\ndata = np.load('my_data.npy')", CORRECT)
    report, _ = graded(path, plain_tier)
    assert report["score"] == score_without()
    assert "cell 1 raised FileNotFoundError" in report["checks"][0]["message"]
    assert "data = np.load('my_data.npy') (line 2)" in report["checks"][0]["message"]


def test_a_cell_that_leaves_a_function_undefined_costs_only_its_checks(tmp_path, plain_tier):
    path = write(
        tmp_path,
        "hw.ipynb",
        HEAD,
        "x = undefined_thing\ndef add_positional_encoding" + TAIL,
        "print('the end')",
    )
    report, _ = graded(path, plain_tier)
    assert ADDS and report["score"] == score_without(*ADDS)
    for name in ADDS:
        check = checks(report)[name]
        assert check["status"] == "skipped"
        assert (
            "add_positional_encoding is not defined in your file: cell 2 raised NameError: "
            "name 'undefined_thing' is not defined: x = undefined_thing"
        ) in check["message"]


@pytest.mark.parametrize("form", ["text", "json", "html", "junit", "gradescope"])
def test_every_report_format_names_the_cell_that_raised(tmp_path, form):
    path = write(tmp_path, "hw.ipynb", CORRECT, "print(undefined_value)")
    out = tmp_path / "report"
    done = run(path, None, "--format", form, "--output", str(out))
    assert done.returncode in (0, 1), done.stderr[-2000:]
    text = out.read_text()
    assert re.search(r"cell 2 raised NameError: name (&#x27;|&apos;|'|\\u0027)undefined_value", text), text[
        :3000
    ]
    assert "print(undefined_value)" in text and "__grader_display__" not in text


def test_a_wrong_redefinition_in_a_raising_cell_is_what_is_graded(tmp_path):
    """The kernel ran the redefinition before the cell raised: that function is graded."""
    path = write(
        tmp_path,
        "hw.ipynb",
        CORRECT,
        "import numpy as np\ndef sinusoidal_pe(max_len, d_model):\n    return np.zeros((max_len, d_model))\n"
        "raise RuntimeError('scratch')",
    )
    report, _ = graded(path)
    assert checks(report)["example-table-3x4"]["status"] == "failed"
    assert report["score"] < score_without()
    assert "cell 2 raised RuntimeError: scratch" in report["checks"][0]["message"]


def test_sys_exit_skips_nothing_the_kernel_would_run(tmp_path):
    """SystemExit fails its cell (IPython catches it: the kernel lives) and the next cell
    runs: a wrong redefinition after it is graded, not hidden by the exit."""
    path = write(
        tmp_path,
        "hw.ipynb",
        CORRECT,
        "import sys\nsys.exit(0)",
        "import numpy as np\ndef sinusoidal_pe(max_len, d_model):\n    return np.zeros((max_len, d_model))",
    )
    report, _ = graded(path)
    assert checks(report)["example-table-3x4"]["status"] == "failed"
    assert "cell 2 raised SystemExit: 0: sys.exit(0) (line 2)" in report["checks"][0]["message"]


def test_a_raising_cell_does_not_hide_a_patched_numpy(tmp_path):
    path = write(
        tmp_path, "hw.ipynb", CORRECT, "import numpy as np\nnp.sin = np.cos\nraise ValueError('oops')"
    )
    report, _ = graded(path)
    assert checks(report)["sin-even-cos-odd"]["status"] == "failed"
    assert report["score"] < score_without()
    assert "cell 2 raised ValueError: oops" in report["checks"][0]["message"]


def test_os_exit_in_a_cell_is_a_crash_that_grades_nothing(tmp_path):
    path = write(tmp_path, "hw.ipynb", CORRECT, "import os\nos._exit(0)")
    report, _ = graded(path)
    assert report["score"] == 0 and report["checks"][0]["status"] == "error"


HOSTILE_EXCEPTIONS = {
    "a __str__ that raises": (
        "class Boom(Exception):\n    def __str__(self):\n        raise RuntimeError('no')\nraise Boom()"
    ),
    "a __str__ that raises SystemExit": (
        "class Boom(Exception):\n    def __str__(self):\n        raise SystemExit\nraise Boom()"
    ),
    "megabytes of escape codes": (
        "class Loud(Exception):\n    def __str__(self):\n"
        "        return '\\x1b[2J\\x1b]0;pwned\\x07' * 500_000\nraise Loud()"
    ),
    "a type whose name raises": (
        "class Meta(type):\n    @property\n    def __name__(cls):\n        raise SystemExit\n"
        "class Odd(Exception, metaclass=Meta):\n    pass\nraise Odd('x')"
    ),
    "a BaseException of its own": "class Out(BaseException):\n    pass\nraise Out('gone')",
    "KeyboardInterrupt": "raise KeyboardInterrupt",
}


@pytest.mark.parametrize("attack", sorted(HOSTILE_EXCEPTIONS))
def test_a_hostile_exception_fails_its_cell_and_nothing_else(tmp_path, attack, plain_tier):
    path = write(tmp_path, "hw.ipynb", CORRECT, HOSTILE_EXCEPTIONS[attack])
    report, raw = graded(path, plain_tier)
    assert report["score"] == score_without()
    message = report["checks"][0]["message"]
    assert "cell 2 raised" in message and len(message.encode()) < 20_000
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", raw)


def test_thousands_of_raising_cells_keep_the_report_bounded(tmp_path):
    path = write(tmp_path, "hw.ipynb", CORRECT, *[f"raise ValueError({n})" for n in range(3000)])
    report, raw = graded(path)
    assert report["score"] == score_without()
    message = report["checks"][0]["message"]
    assert "cell 2 raised ValueError: 0: raise ValueError(0)" in message
    assert "and 2990 more cells raised" in message and len(message) < 5000
    assert len(raw) < 200_000


def test_a_string_opened_in_one_cell_and_closed_in_another_hides_no_import(tmp_path):
    """Each cell is compiled alone, as Jupyter runs it: the import between the two halves
    runs, and the import scan reads it (it reads exactly what runs)."""
    path = write(tmp_path, "hw.ipynb", CORRECT, 's = """', "import os", '"""')
    report, _ = graded(path)
    numpy_only = checks(report)["numpy-only"]
    assert numpy_only["status"] == "failed" and "os" in numpy_only["message"]
    message = report["checks"][0]["message"]
    assert "cell 2 raised SyntaxError" in message and "cell 4 raised SyntaxError" in message


def test_a_python_file_with_a_raising_line_still_does_not_load(tmp_path, plain_tier):
    path = tmp_path / "hw.py"
    path.write_text(CORRECT + "\nprint(undefined_value)\n")
    report, _ = graded(str(path), plain_tier)
    assert report["score"] == 0 and report["checks"][0]["status"] == "error"
    assert "importing your file raised NameError" in report["checks"][0]["message"]
    assert all(c["status"] == "skipped" for c in report["checks"][1:] if c["name"] != "numpy-only")


# --------------------------------------------------------------------------- the worker's word


def _load_reply(**extra) -> dict:
    return {"ok": True, "functions": {"f": {"defined": True, "callable": True, "params": ["x"]}}, **extra}


def test_a_load_answer_says_how_many_cells_failed_within_caps():
    error = {
        "type": "NameError",
        "message": "x",
        "frames": [{"line": 3, "function": "<module>", "code": "x"}],
    }
    outcome = outcome_from_reply(_load_reply(cell_errors=[error], cells_failed=7), [], protocol.LOAD, ["f"])
    assert outcome.status == OK and outcome.cells_failed == 7 and outcome.cell_errors[0].type == "NameError"
    for bad in (
        {"cell_errors": [error] * (protocol.CELL_ERRORS + 1), "cells_failed": 10**3},
        {"cell_errors": [error, error], "cells_failed": 1},  # fewer than it describes
        {"cell_errors": [error], "cells_failed": protocol.CELLS_CAP + 1},
        {"cell_errors": ["x"], "cells_failed": 1},
        {"cell_errors": {}, "cells_failed": 0},
        {"cell_errors": [], "cells_failed": True},
    ):
        with pytest.raises(wire.WireError):
            outcome_from_reply(_load_reply(**bad), [], protocol.LOAD, ["f"])


def test_warm_workers_grade_past_a_raising_cell_too(tmp_path, warm_tier):
    klass = tmp_path / "class"
    klass.mkdir()
    write(klass, "alice.ipynb", CORRECT, "print(undefined_value)")
    write(klass, "bob.ipynb", HEAD, "x = undefined_thing\ndef add_positional_encoding" + TAIL)
    out = tmp_path / "out"
    done = run_cli("batch", PE_TASK, str(klass), "--out", str(out), "--isolation", warm_tier, timeout=300)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    reports = {
        r["submission"]: r
        for r in map(json.loads, (out / "reports-positional-encoding.jsonl").read_text().splitlines())
    }
    assert reports["alice.ipynb"]["score"] == score_without()
    assert reports["bob.ipynb"]["score"] == score_without(*ADDS)
    assert "cell 2 raised NameError" in reports["bob.ipynb"]["checks"][0]["message"]


def test_a_cell_that_claims_the_machine_lacks_numpy_is_no_environment_problem(tmp_path):
    """A wrong notebook ending in ``raise ModuleNotFoundError(..., name="numpy")``: numpy is
    here, so the claim is the file's own, and its wrong answers are graded as wrong (not
    put down to the grading machine, every check skipped)."""
    wrong = CORRECT.replace("np.sin(angles)", "np.sin(2 * angles)")
    assert wrong != CORRECT
    path = write(
        tmp_path, "hw.ipynb", wrong, 'raise ModuleNotFoundError("No module named \'numpy\'", name="numpy")'
    )
    report, raw = graded(path)
    assert report["status"] == "failed" and report.get("reason") != "environment", raw[:2000]
    assert "environment" not in report["checks"][0]["message"]
    assert checks(report)["sin-even-cos-odd"]["status"] == "failed"
