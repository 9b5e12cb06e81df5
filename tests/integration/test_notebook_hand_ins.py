"""Notebooks handed in, through the commands that grade them (check, batch, ci, Gradescope's
folder), and source read as Python reads it (BOM, CRLF, an undeclared encoding). The
pure parts (the module, the source map, discovery): tests/unit/test_notebook.py."""

import csv
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import nbformat
from helpers.cli import run_cli
from helpers.paths import PE_SAMPLES, PE_TASK, ROOT
from helpers.tasks import as_cell, course_with_full_tasks, score_without
from helpers.workflow_commands import parse_command
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

SHAPE_TASK = os.path.join(ROOT, "tasks", "pe-table-shape")
SHAPE_CORRECT = os.path.join(ROOT, "submissions", "pe-table-shape", "correct_numpy.py")
PE_CORRECT = os.path.join(PE_SAMPLES, "correct_vectorized.py")


def write_notebook(path, *cells):
    nbformat.write(new_notebook(cells=list(cells)), str(path))
    return str(path)


def correct_cells():
    return [new_code_cell(open(PE_CORRECT).read())]


def graded(task, path, *extra):
    done = run_cli("check", task, str(path), "--format", "json", *extra)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    return json.loads(done.stdout)


def by_name(report):
    return {c["name"]: c for c in report["checks"]}


def test_a_notebook_whose_cell_3_raises_points_at_cell_3_line_2(tmp_path):
    path = write_notebook(
        tmp_path / "hw.ipynb",
        new_markdown_cell("# Homework"),
        new_code_cell("import numpy as np"),
        new_code_cell("ready = True\nraise RuntimeError('not finished')"),
    )
    done = run_cli("check", PE_TASK, path)
    assert done.returncode == 1, done.stderr
    assert (
        "cell 3 raised RuntimeError: not finished: raise RuntimeError('not finished') (line 2)" in done.stdout
    )
    loads = graded(PE_TASK, path)["checks"][0]
    assert loads["status"] == "failed"  # it ran on: what it defines (nothing) is graded


def test_a_function_that_raises_in_a_cell_is_located_there(tmp_path):
    path = write_notebook(
        tmp_path / "hw.ipynb",
        *correct_cells(),
        new_code_cell("def add_positional_encoding(x, base=10000.0):\n    return x + undefined_name"),
    )
    check = by_name(graded(PE_TASK, path))["example-add-ones"]
    assert (
        "NameError" in check["message"] and "(cell 2, line 2 in add_positional_encoding" in check["message"]
    )
    assert (check["cell"], check["line"]) == (2, 2)


def test_a_syntax_error_is_located_in_its_cell(tmp_path):
    path = write_notebook(
        tmp_path / "hw.ipynb",
        new_code_cell("import numpy as np"),
        new_markdown_cell("next"),
        new_code_cell("x = 1\ndef f(:\n    pass"),
    )
    loads = graded(PE_TASK, path)["checks"][0]
    assert "cell 3 raised SyntaxError: invalid syntax: def f(: (line 2)" in loads["message"]


def test_a_magic_is_left_out_with_a_note_and_the_notebook_gets_full_marks(tmp_path):
    cells = correct_cells()
    cells[0].source = "%matplotlib inline\n!pip install numpy\n" + cells[0].source
    path = write_notebook(
        tmp_path / "hw.ipynb", *cells, new_code_cell("%%bash\nimport os\nos.system('echo hidden')")
    )
    report = graded(PE_TASK, path)
    assert report["score"] == score_without() and report["status"] == "passed"
    note = report["checks"][0]["message"]
    assert "note: left out of your notebook and never run" in note
    assert "cell 1, line 1: %matplotlib inline" in note and "cell 1, line 2: !pip install numpy" in note
    assert "cell 2, the whole cell (it opens with the cell magic %%bash)" in note
    assert by_name(report)["numpy-only"]["status"] == "passed"  # os never imported: not in the module


def test_an_import_in_a_cell_is_found_by_cell_and_line(tmp_path):
    path = write_notebook(
        tmp_path / "hw.ipynb", new_markdown_cell("m"), *correct_cells(), new_code_cell("x = 1\nimport os")
    )
    check = by_name(graded(PE_TASK, path))["numpy-only"]
    assert check["status"] == "failed" and "os (cell 3, line 2)" in check["message"]


def test_a_script_notebook_is_graded_by_what_it_prints_when_it_runs(tmp_path):
    code = open(SHAPE_CORRECT).read()
    path = write_notebook(tmp_path / "table.ipynb", new_code_cell("%matplotlib inline"), new_code_cell(code))
    assert graded(SHAPE_TASK, path)["score"] == score_without(task=SHAPE_TASK)


PE_CODE = """import numpy as np
def pe(L, D):
    p = np.arange(L)[:, None]; i = np.arange(D)[None, :]
    ang = p / 10000 ** (2 * (i // 2) / D)
    return np.where(i % 2 == 0, np.sin(ang), np.cos(ang))
table = pe(5, 8)
"""


def test_work_inside_a_time_cell_runs(tmp_path):
    """%%time around the work is common: IPython runs its body, and so does the grader."""
    path = write_notebook(
        tmp_path / "timed.ipynb", new_code_cell("%%time\n" + PE_CODE), new_code_cell("print(table.shape)")
    )
    report = graded(SHAPE_TASK, path)
    assert report["score"] == score_without(task=SHAPE_TASK), report["checks"]
    assert "cell 1, line 1: %%time (its code is kept and run, not timed)" in report["checks"][0]["message"]


def test_a_cells_displayed_value_is_what_it_prints(tmp_path):
    """Jupyter shows a cell's last expression: 'table.shape' alone answers as print would;
    'table.shape;' shows nothing, as in Jupyter."""
    path = write_notebook(tmp_path / "shown.ipynb", new_code_cell(PE_CODE), new_code_cell("table.shape"))
    report = graded(SHAPE_TASK, path)
    assert report["score"] == score_without(task=SHAPE_TASK), report["checks"]
    assert report["output"].strip() == "(5, 8)"
    quiet = write_notebook(tmp_path / "quiet.ipynb", new_code_cell(PE_CODE), new_code_cell("table.shape;"))
    assert by_name(graded(SHAPE_TASK, quiet))["prints-the-shape"]["status"] != "passed"


def test_a_malformed_notebook_scores_nothing_with_a_clear_message(tmp_path):
    path = tmp_path / "hw.ipynb"
    path.write_bytes(open(PE_CORRECT, "rb").read())  # a Python file under a notebook's name
    report = graded(PE_TASK, path)
    assert report["score"] == 0 and report["status"] == "error"
    assert report["checks"][0]["message"] == (
        "your file was not run: hw.ipynb is not a notebook: it is not JSON (line 1, column 1: "
        "Expecting value); it looks like Python source: hand that in as a .py file."
    )


def test_batch_grades_notebooks_and_any_case_of_py_and_names_what_it_skips(tmp_path):
    klass = tmp_path / "class"
    klass.mkdir()
    write_notebook(klass / "alice.ipynb", *correct_cells())
    (klass / "dave.PY").write_bytes(open(PE_CORRECT, "rb").read())
    (klass / "notes.txt").write_text("grade these\n")
    write_notebook(klass / "erin.ipynb", *correct_cells())
    (klass / "erin.py").write_bytes(open(PE_CORRECT, "rb").read())
    out = tmp_path / "out"
    done = run_cli("batch", PE_TASK, str(klass), "--out", str(out), "--jobs", "2", timeout=300)
    assert done.returncode == 0, done.stderr
    with open(out / "grades-positional-encoding.csv", newline="") as f:
        grades = {r["student"]: r for r in csv.DictReader(f)}
    assert sorted(grades) == ["alice", "dave", "erin"]
    assert grades["alice"]["score"] == grades["dave"]["score"] == as_cell(score_without())
    assert grades["erin"]["status"] == "error" and grades["erin"]["score"] == "0"
    assert "skipped: notes.txt (not a .py or .ipynb file)" in done.stderr
    summary = (out / "summary-positional-encoding.md").read_text()
    assert r"skipped: notes\.txt (not a \.py or \.ipynb file)" in summary
    assert "## Errored (nothing could be graded)\n\nerin\n" in summary
    reports = [json.loads(line) for line in open(out / "reports-positional-encoding.jsonl")]
    erin = next(r for r in reports if r["student"] == "erin")
    assert erin["checks"][0]["message"].startswith("two submissions for erin: erin.ipynb and erin.py")


def test_course_ci_grades_a_notebook_solution_and_annotates_the_notebook(tmp_path):
    repo = tmp_path / "repo"
    course = course_with_full_tasks(repo / "course")
    os.remove(course / "solutions" / "normalize-rows.py")
    write_notebook(
        course / "solutions" / "normalize-rows.ipynb",
        new_code_cell("import numpy as np"),
        new_code_cell("def normalize_rows(m):\n    raise ValueError('todo')"),
    )
    env = dict(
        os.environ,
        GITHUB_ACTIONS="true",
        GITHUB_WORKSPACE=str(repo),
        PYTHONPATH=ROOT,
        GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"),
    )
    done = subprocess.run(
        [sys.executable, "-m", "grader", "ci", "course", "--junit", "junit.xml"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    commands = [parse_command(line) for line in done.stdout.splitlines() if line.startswith("::error")]
    assert commands
    for _, props, _message in commands:
        assert props["file"] == "course/solutions/normalize-rows.ipynb" and "line" not in props
    assert any("(cell 2, line 2 in normalize_rows" in message for _, _, message in commands)
    cases = ET.parse(repo / "junit.xml").getroot().findall("testsuite/testcase")
    assert cases and all(
        c.get("file") == "course/solutions/normalize-rows.ipynb" and c.get("line") is None for c in cases
    )


def test_gradescope_takes_a_notebook_from_the_submission_folder(tmp_path):
    upload = tmp_path / "submission"
    upload.mkdir()
    write_notebook(upload / "Homework 3.IPYNB", *correct_cells())
    (upload / "README.md").write_text("my notes\n")
    results = tmp_path / "results.json"
    done = run_cli("check", PE_TASK, str(upload), "--format", "gradescope", "--output", str(results))
    assert done.returncode == 0, done.stderr
    assert json.loads(results.read_text())["score"] == score_without()


# --------------------------------------------------------------------------- as Python reads it


def test_a_script_saved_by_notepad_gets_full_marks_and_keeps_its_declaration(tmp_path):
    """UTF-8 with a BOM and CRLF line ends: Python reads both, and so does the grader (the
    import scan, the worker, the line numbers and the sample's "# expect:" line)."""
    windows = tmp_path / "windows.py"
    windows.write_bytes(b"\xef\xbb\xbf" + open(SHAPE_CORRECT, "rb").read().replace(b"\n", b"\r\n"))
    report = graded(SHAPE_TASK, windows)
    assert report["score"] == score_without(task=SHAPE_TASK)
    assert by_name(report)["allowed-imports"]["status"] == "passed"
    from grader.task.samples import read_expectation

    assert read_expectation(str(windows)).verdict == "full marks"
    raising = tmp_path / "raising.py"
    raising.write_bytes(b"\xef\xbb\xbfimport numpy as np\r\n\r\nraise ValueError('third line')\r\n")
    run = graded(SHAPE_TASK, raising)["checks"][0]
    assert run["line"] == 3 and "(line 3 in <module>" in run["message"]


def test_an_undeclared_cp1251_file_is_refused_with_pythons_reason(tmp_path):
    path = tmp_path / "cp1251.py"
    path.write_bytes(open(SHAPE_CORRECT, "rb").read() + "# Привет\n".encode("cp1251"))
    report = graded(SHAPE_TASK, path)
    assert report["score"] == 0 and report["status"] == "error"
    assert (
        "Non-UTF-8 code starting with '\\xcf' on line 13, but no encoding declared"
        in report["checks"][0]["message"]
    )


def test_arrays_a_notebook_script_computed_are_named_by_cell_and_line(tmp_path):
    table = (
        "def table(n, d):\n    p = np.arange(n)[:, None]\n    i = np.arange(d)[None, :]\n"
        "    angle = p / 10000 ** ((i // 2 * 2) / d)\n"
        "    return np.where(i % 2 == 0, np.sin(angle), np.cos(angle))"
    )
    path = write_notebook(
        tmp_path / "batch.ipynb",
        new_markdown_cell("# Batch"),
        new_code_cell("import numpy as np"),
        new_code_cell(table),
        new_code_cell("batch = np.zeros((1, 3, 6))\nmarked = batch + table(4, 6)[1:4]\nprint(marked.shape)"),
    )
    checks = by_name(graded(os.path.join(ROOT, "tasks", "pe-batch-sum"), path))
    assert checks["builds-the-table"]["status"] == "passed"
    assert "`table(4, 6)` (cell 4, line 2)" in checks["builds-the-table"]["message"]
    assert checks["adds-the-first-three-rows"]["status"] == "failed"
