"""Notebook hand-ins and how submissions are found and read, in process: a notebook's code
cells as one module with a source map, IPython syntax left out with a note, hostile
notebooks refused with a clear verdict, locations shown as "cell N, line M", discovery of
.py/.ipynb in any case naming what it skips, and source read as Python reads it. (The
commands that grade notebooks: tests/integration/test_notebook_hand_ins.py.)"""

import json
import os
import xml.etree.ElementTree as ET

import nbformat
import pytest
from helpers.paths import PE_SAMPLES, ROOT
from helpers.workflow_commands import parse_command
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output, new_raw_cell

from grader.grading.checks.calls import describe_error, error_cell, error_line
from grader.records.result import FAILED, CheckResult, Result
from grader.records.worker_error import ErrorFrame, WorkerError
from grader.report import github, junit
from grader.submission.file import (
    SubmissionError,
    SubmissionFile,
    read_submission,
    submission_source,
)
from grader.submission.import_scan import hidden_routes, static_imports
from grader.submission.ipython_syntax import python_lines
from grader.submission.python_file import python_source
from grader.submission.source_map import SourceMap

CORRECT = os.path.join(PE_SAMPLES, "correct_vectorized.py")


def notebook_bytes(*cells, **metadata) -> bytes:
    notebook = new_notebook(cells=list(cells))
    notebook.metadata.update(metadata)
    return nbformat.writes(notebook).encode()


def source_of(name: str, data: bytes):
    return submission_source(SubmissionFile(name, data))


# --------------------------------------------------------------------------- the module


def test_code_cells_run_in_order_as_one_module_and_lines_map_to_cells():
    data = notebook_bytes(
        new_markdown_cell("# title\nimport os"),  # cell 1: text
        new_code_cell("import numpy as np\nx = 1"),  # cell 2
        new_raw_cell("import socket"),  # cell 3: text
        new_code_cell("def f():\n    return x\n"),
    )  # cell 4
    source = source_of("alice.ipynb", data)
    assert source.problem == "" and source.notes == ()
    assert "import os" not in source.text and "import socket" not in source.text
    lines = source.text.splitlines()
    assert lines.index("import numpy as np") < lines.index("def f():")
    assert source.where(lines.index("    return x") + 1) == "cell 4, line 2"
    assert source.where(lines.index("x = 1") + 1) == "cell 2, line 2"
    # The import scan reads the same code, and says where in the notebook it found what.
    assert [source.where(line) for _, line in static_imports(source.text)] == ["cell 2, line 1"]
    # What runs is exactly what was scanned.
    assert python_source(source.code).text == source.text


def test_stored_outputs_and_execution_counts_are_never_read():
    cell = new_code_cell("print(1)", execution_count=99)
    cell.outputs = [new_output("stream", name="stdout", text="(5, 8)\nimport os\n")]
    source = source_of("a.ipynb", notebook_bytes(cell))
    assert "(5, 8)" not in source.text and "import os" not in source.text and "99" not in source.text


@pytest.mark.parametrize(
    "line",
    [
        "%matplotlib inline",
        "!pip install scipy",
        "?np.zeros",
        "np.zeros?",
        "np.zeros??",
        "files = !ls",
        "t = %timeit -o f()",
        "  %time f()",
    ],
)
def test_ipython_lines_are_left_out_with_a_note(line):
    kept, notes = python_lines(f"import numpy as np\n{line}\nx = 1", 3)
    assert kept[0] == "import numpy as np" and kept[2] == "x = 1"
    assert kept[1].strip() == "pass"  # one for one: every other line keeps its number
    assert notes == [f"cell 3, line 2: {line.strip()}"]


def test_a_magic_as_the_only_statement_of_a_block_keeps_the_block_valid():
    kept, notes = python_lines("for i in range(3):\n    !echo hi\n", 1)
    compile("\n".join(kept), "cell", "exec")
    assert notes == ["cell 1, line 2: !echo hi"]


@pytest.mark.parametrize(
    "text",
    [
        "x = (1,\n%2)",  # a continuation line inside brackets
        "s = '''\n%not a magic\n'''",  # inside a triple-quoted string
        "y = 5 \\\n  % 3",  # after a backslash continuation
        "z = 'what?'",  # a question mark in a string
        "w = 1  # why?",  # ... in a comment
    ],
)
def test_the_same_characters_inside_python_are_python(text):
    kept, notes = python_lines(text, 1)
    assert kept == text.split("\n") and notes == []


@pytest.mark.parametrize(
    "magic", ["  %%bash", "%%writefile helper.py", "%%html", "%%script sh", "%%javascript", "%%unknownmagic"]
)
def test_a_cell_magic_leaves_out_the_whole_cell_and_says_so(magic):
    """A cell magic such as %%bash decides what its body means (shell, a file's text), so
    none of the cell runs (nor is scanned: it is not in the module)."""
    data = notebook_bytes(
        new_code_cell("import numpy as np"), new_code_cell(f"\n{magic}\nimport os\nos.system('id')")
    )
    source = source_of("a.ipynb", data)
    assert "import os" not in source.text and "os.system" not in source.text
    assert "cell 2, the whole cell" in source.notes[0] and magic.split()[0] in source.notes[0]
    assert "never run" in source.notes[0]


def test_a_coding_line_in_a_cell_is_a_comment():
    """A cell is text already: "# coding: utf-7" must not make Python read "+AAo-" as a
    new line (and run an import the scan took for part of a comment)."""
    data = notebook_bytes(new_code_cell("# coding: utf-7\nx = 1  # +AAo-import os\n"))
    source = source_of("a.ipynb", data)
    assert source.problem == ""
    assert static_imports(source.text) == []
    namespace: dict = {}
    exec(compile(source.code, "m.py", "exec"), namespace)  # what Python makes of the bytes
    assert "os" not in namespace and namespace["x"] == 1


def test_crlf_in_a_cell_reads_as_python_reads_a_file():
    source = source_of("a.ipynb", notebook_bytes(new_code_cell("x = 1\r\ny = 2\rz = 3\r\n")))
    assert source.text.splitlines()[1:] == ["x = 1", "y = 2", "z = 3"]
    assert source.where(4) == "cell 1, line 3"


def test_format_3_is_converted_and_graded():
    v3 = {
        "nbformat": 3,
        "nbformat_minor": 0,
        "metadata": {"name": ""},
        "worksheets": [
            {
                "metadata": {},
                "cells": [
                    {"cell_type": "markdown", "source": "hi", "metadata": {}},
                    {
                        "cell_type": "code",
                        "input": ["x = 1\n", "y = x"],
                        "language": "python",
                        "outputs": [],
                        "collapsed": False,
                        "metadata": {},
                    },
                ],
            }
        ],
    }
    source = source_of("old.ipynb", json.dumps(v3).encode())
    assert source.problem == ""
    assert source.where(source.text.splitlines().index("y = x") + 1) == "cell 2, line 2"


# --------------------------------------------------------------------------- hostile notebooks


def _cell_source(value) -> bytes:
    notebook = json.loads(notebook_bytes(new_code_cell("x = 1")))
    notebook["cells"][0]["source"] = value
    return json.dumps(notebook).encode()


HOSTILE = {
    "deeply nested JSON": (
        b'{"nbformat": 4, "cells": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        "nested too deeply",
    ),
    "a source that is a number": (_cell_source(5), "cell 1"),
    "a source that is an object": (_cell_source({"import os": 1}), "cell 1"),
    "a source list holding a number": (_cell_source(["x = 1\n", 3]), "cell 1"),
    "a null byte in a code cell": (_cell_source("x = 1\x00import os"), "null character"),
    "a lone surrogate": (_cell_source("x = '\ud800'"), "not valid Unicode"),
    "an R kernel": (
        notebook_bytes(
            new_code_cell("x <- 1"), kernelspec={"name": "ir", "language": "R", "display_name": "R"}
        ),
        "R language",
    ),
    "format 5": (
        json.dumps({"nbformat": 5, "nbformat_minor": 0, "metadata": {}, "cells": []}).encode(),
        "format version 5",
    ),
    "Python source named .ipynb": (open(CORRECT, "rb").read(), "hand that in as a .py file"),
    "a JSON list": (b"[1, 2, 3]", "not a notebook"),
    "not UTF-8": (b'{"nbformat": 4, "cells": ["\xff"]}', "not UTF-8"),
    "empty": (b"", "empty"),
    "cells that are not a list": (
        b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": {"a": 1}}',
        "no list of cells",
    ),
    "invalid for the schema": (
        b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": '
        b'[{"cell_type": "code", "source": "x", "metadata": {}}]}',
        "not a valid notebook",
    ),
}


@pytest.mark.parametrize("attack", sorted(HOSTILE))
def test_a_hostile_notebook_is_refused_naming_the_file(attack):
    data, said = HOSTILE[attack]
    source = source_of("mallory\x1b[31m.ipynb", data)
    assert source.text is None and source.code == b""
    assert said in source.problem, source.problem
    assert source.problem.startswith("mallory\\x1b[31m.ipynb ")  # named, and shown, not sent


def test_a_py_file_holding_a_notebook_is_not_run():
    data = notebook_bytes(new_code_cell("import numpy as np"))
    source = source_of("alice.py", data)
    assert source.text is None and "holds a Jupyter notebook" in source.problem
    assert ".ipynb" in source.problem
    assert source_of("alice.py", b'x = {"nbformat": 4}\n').text is not None  # Python is Python


def test_an_oversized_notebook_is_refused_with_a_hint(tmp_path):
    path = tmp_path / "big.ipynb"
    path.write_bytes(b" " * ((1 << 20) + 1))
    with pytest.raises(SubmissionError, match="larger than .*Clear the notebook's outputs"):
        read_submission(str(path))


# --------------------------------------------------------------------------- locations


def test_errors_from_the_worker_are_located_in_cells():
    origins = ((0, 0), (2, 1), (2, 2), (4, 1), (4, 2))
    located = SourceMap(origins).located(
        WorkerError(
            type="ValueError",
            message="nope",
            line=None,
            frames=(
                ErrorFrame(line=3, function="<module>", code="f()"),
                ErrorFrame(line=5, function="f", code="raise ValueError('nope')"),
            ),
        )
    )
    assert (error_cell(located), error_line(located)) == (4, 2)
    assert (
        describe_error(located) == "raised ValueError: nope (cell 4, line 2 in f: raise ValueError('nope'))"
    )
    syntax = SourceMap(origins).located(
        WorkerError(type="SyntaxError", message="invalid syntax", line=4, frames=())
    )
    assert describe_error(syntax) == "raised SyntaxError: invalid syntax (cell 4, line 1)"
    # A plain file keeps its lines; a number outside the map (made up with compile) too.
    assert describe_error(WorkerError(type="E", message="m", line=7, frames=())) == "raised E: m (line 7)"
    assert SourceMap(origins).where(99) == "line 99"


def test_a_traceback_quotes_the_students_own_line_not_the_rewritten_one():
    from grader.submission.notebook import notebook_code

    cells = [
        new_markdown_cell("m"),
        new_code_cell("x = 1"),
        new_code_cell("%time y = 2\nprint('\x1b[2J', v)"),
    ]
    code = notebook_code(notebook_bytes(*cells))
    line = code.text.splitlines().index("__grader_display__((print('\x1b[2J', v)))") + 1
    located = code.source_map.located(
        WorkerError(
            type="NameError",
            message="m",
            frames=(ErrorFrame(line=line, function="<module>", code="__grader_display__((print(x)))"),),
        )
    )
    assert (located.frames[0].cell, located.frames[0].line) == (3, 2)
    assert "__grader_display__" not in located.frames[0].code and "\x1b" not in located.frames[0].code
    assert code.source_map.cells() == (3, 4)  # after the header and the display helper


def test_a_cell_python_cannot_compile_is_left_out_alone_and_said_in_the_students_words():
    from grader.submission.notebook import notebook_code

    sources = ('s = """', "import os", '"""', "def f(:\n    pass")
    code = notebook_code(notebook_bytes(*map(new_code_cell, sources)))
    assert [n for n, _text in code.uncompiled] == [1, 3, 4]
    assert "import os" in code.text and '"""' not in code.text  # what runs is what is scanned
    assert code.uncompiled[2][1] == "cell 4 raised SyntaxError: invalid syntax: def f(:"
    assert python_source(code.text.encode()).text is not None


def test_import_scan_findings_say_cell_and_line():
    data = notebook_bytes(
        new_markdown_cell("intro"), new_code_cell("import numpy as np"), new_code_cell("x = 1\n_f = eval")
    )
    source = source_of("a.ipynb", data)
    assert hidden_routes(source.text, (), source.where) == ["eval (cell 3, line 2: dynamic code)"]


def _notebook_result(path, check):
    return Result(
        task="t",
        submission=str(path),
        score=0,
        max_score=1,
        status=FAILED,
        isolation="bubblewrap",
        checks=[check],
    )


def test_reports_point_at_the_notebook_without_a_line_of_its_json(tmp_path):
    path = tmp_path / "solutions" / "t.ipynb"
    path.parent.mkdir()
    path.write_bytes(notebook_bytes(new_code_cell("def f():\n    return 1")))
    raised = CheckResult(
        "a", FAILED, 0.0, 1.0, message="raised E (cell 1, line 2 in f: ...)", line=2, cell=1, function="f"
    )
    mismatch = CheckResult("b", FAILED, 0.0, 1.0, message="values differ", function="f")
    for check in (raised, mismatch):
        [annotation] = github.annotations([_notebook_result(path, check)], str(tmp_path))
        _, props, data = parse_command(annotation)
        assert props["file"] == "solutions/t.ipynb" and "line" not in props
        assert data.startswith(check.message)
        case = ET.fromstring(junit.render_many([_notebook_result(path, check)], str(tmp_path))).find(
            "testsuite/testcase"
        )
        assert case.get("file") == "solutions/t.ipynb" and case.get("line") is None
        assert case.get("classname") == "t.t"


# --------------------------------------------------------------------------- finding submissions


def _class_folder(tmp_path):
    klass = tmp_path / "class"
    klass.mkdir()
    (klass / "alice.ipynb").write_bytes(notebook_bytes(new_code_cell("x = 1")))
    (klass / "dave.PY").write_bytes(b"x = 1\n")
    (klass / "notes.txt").write_text("to do\n")
    (klass / "README.md").write_text("# class\n")
    (klass / "data.csv").write_text("1,2\n")
    (klass / "old.pyc").write_bytes(b"\x00")
    (klass / "__pycache__").mkdir()
    (klass / ".DS_Store").write_bytes(b"")
    (klass / ".ipynb_checkpoints").mkdir()
    (klass / "shortcut.txt").symlink_to(klass / "notes.txt")
    return klass


def test_discovery_takes_py_and_ipynb_in_any_case_and_names_everything_it_skips(tmp_path):
    from grader.classroom.discovery import discover

    found = discover(str(_class_folder(tmp_path)))
    assert sorted(s.student for s in found.submissions) == ["alice", "dave"]
    assert all(s.problem is None for s in found.submissions)
    assert {s.name: s.reason for s in found.skipped} == {
        ".DS_Store": "a hidden file",
        ".ipynb_checkpoints": "a hidden folder",
        "README.md": "not a .py or .ipynb file",
        "data.csv": "not a .py or .ipynb file",
        "notes.txt": "not a .py or .ipynb file",
        "shortcut.txt": "not a .py or .ipynb file",
        "old.pyc": "compiled Python, not source: hand in the .py file",
        "__pycache__": "Python's bytecode cache, not a submission",
    }


def test_a_skipped_name_is_shown_never_sent(tmp_path):
    from grader.classroom.discovery import discover, skipped_markdown, skipped_text

    (tmp_path / "evil\x1b[2J|*x*.txt").write_text("")
    [skipped] = discover(str(tmp_path)).skipped
    assert skipped.name == "evil\\x1b[2J|*x*.txt"
    assert (
        skipped_markdown([skipped]).splitlines()[-1]
        == r"- skipped: evil\\x1b\[2J\|\*x\*\.txt (not a \.py or \.ipynb file)"
    )
    assert (
        skipped_text([skipped]).splitlines()[-1]
        == r"- skipped: evil\x1b[2J|*x*.txt (not a .py or .ipynb file)"
    )


def test_a_student_with_a_py_and_an_ipynb_is_one_error_naming_both(tmp_path):
    from grader.classroom.discovery import discover

    klass = tmp_path / "class"
    klass.mkdir()
    (klass / "alice.py").write_text("x = 1\n")
    (klass / "alice.ipynb").write_bytes(notebook_bytes(new_code_cell("x = 1")))
    (klass / "bob.py").write_text("x = 1\n")
    (klass / "bob.PY").write_text("x = 2\n")
    found = {s.student: s for s in discover(str(klass)).submissions}
    assert sorted(found) == ["alice", "bob"]
    assert found["alice"].problem == (
        "two submissions for alice: alice.ipynb and alice.py; keep one of them and run the batch again."
    )
    assert "bob.PY and bob.py" in found["bob"].problem


@pytest.mark.parametrize(
    "names,chosen",
    [
        (["hw.IPYNB"], "hw.IPYNB"),
        (["A.PY"], "A.PY"),
        (["helper.py", "Solution.ipynb"], "Solution.ipynb"),
        (["helper.py", "main.ipynb", "notes.txt"], "main.ipynb"),
    ],
)
def test_a_folder_submission_holds_a_py_or_an_ipynb(tmp_path, names, chosen):
    for name in names:
        (tmp_path / name).write_text("x = 1\n")
    assert read_submission(str(tmp_path)).name == chosen


def test_a_folder_with_solution_py_and_solution_ipynb_is_ambiguous(tmp_path):
    (tmp_path / "solution.py").write_text("x = 1\n")
    (tmp_path / "solution.ipynb").write_text("{}")
    with pytest.raises(SubmissionError, match="solution.ipynb and solution.py; keep one"):
        read_submission(str(tmp_path))


def test_course_ci_finds_a_notebook_solution_in_any_case(tmp_path):
    from grader.authoring import load_task
    from grader.integrations.course_ci import solution_for

    task = load_task(os.path.join(ROOT, "tasks", "pe-table-shape"))
    solutions = tmp_path / "solutions"
    solutions.mkdir()
    assert solution_for(str(tmp_path), task) is None
    (solutions / "pe-table-shape.IPYNB").write_text("{}")
    (solutions / "pe-table-shape.txt").write_text("")
    assert solution_for(str(tmp_path), task) == str(solutions / "pe-table-shape.IPYNB")
    (solutions / "pe-table-shape.py").write_text("")
    with pytest.raises(SubmissionError, match="two solutions for pe-table-shape"):
        solution_for(str(tmp_path), task)


def test_a_notebook_sample_declares_its_verdict_in_its_first_cell(tmp_path):
    from grader.task.samples import read_expectation, sample_files

    markdown = tmp_path / "a.ipynb"
    markdown.write_bytes(
        notebook_bytes(new_markdown_cell("# expect: full marks\n\nNotes."), new_code_cell("# expect: error"))
    )
    code = tmp_path / "b.ipynb"
    code.write_bytes(
        notebook_bytes(
            new_raw_cell("raw"),
            new_code_cell("import numpy as np\n# expect: fails table-shape, odd-width-exponent"),
        )
    )
    bom = tmp_path / "c.py"
    bom.write_bytes(b"\xef\xbb\xbf# expect: error\nx = 1\n")
    assert read_expectation(str(markdown)).verdict == "full marks"
    assert read_expectation(str(code)).checks == ("table-shape", "odd-width-exponent")
    assert read_expectation(str(bom)).verdict == "error"
    assert sample_files(str(tmp_path)) == [str(markdown), str(code), str(bom)]
    wrong = tmp_path / "d.ipynb"
    wrong.write_bytes(notebook_bytes(new_code_cell("x = 1\n# expect: perfection")))
    with pytest.raises(ValueError, match=r"d.ipynb: cell 1, line 2: '# expect: perfection'"):
        read_expectation(str(wrong))


# --------------------------------------------------------------------------- read as Python reads


def test_a_file_not_in_utf8_is_refused_with_pythons_reason():
    cp1251 = "# Привет\n".encode("cp1251")
    early = python_source(cp1251 + b"x = 1\n")
    late = python_source(b"x = 1\n" * 5 + cp1251)
    for refused, line in ((early, 1), (late, 6)):
        assert refused.text is None
        assert (
            f"SyntaxError: Non-UTF-8 code starting with '\\xcf' on line {line}, but no encoding declared"
        ) in refused.problem, refused.problem
    declared = python_source(b"# -*- coding: cp1251 -*-\n" + cp1251)
    assert declared.text is not None and "Привет" in declared.text


def test_bom_and_crlf_read_as_python_reads_them():
    with open(CORRECT, "rb") as f:
        correct = f.read()
    for data in (b"\xef\xbb\xbf" + correct, correct.replace(b"\n", b"\r\n")):
        source = python_source(data)
        assert source.code == data  # the worker compiles these very bytes
        assert [m for m, _ in static_imports(source.text)] == ["numpy"]


@pytest.mark.parametrize("magic", ["%%time", "%%timeit", "%%timeit -n 10 -r 3", "%%capture", "%%capture out"])
def test_a_timing_or_capture_magic_keeps_its_body_which_runs_and_is_scanned(magic):
    """IPython runs these cells' bodies as Python: only the magic line is left out (noted),
    every line keeps its number, and the body is in the module the import scan reads."""
    data = notebook_bytes(
        new_code_cell("import numpy as np"), new_code_cell(f"\n{magic}\nimport os\ntable = np.zeros(3)")
    )
    source = source_of("a.ipynb", data)
    assert "import os" in source.text and "table = np.zeros(3)" in source.text
    assert magic not in source.text
    assert source.notes[0].startswith("note: left out of your notebook and never run")
    assert f"cell 2, line 2: {magic} (its code is kept and run" in source.notes[0]
    module = source.text.split("\n")
    line = module.index("import os") + 1
    assert SourceMap(source.source_map.origins).where(line) == "cell 2, line 3"
    assert static_imports(source.text)[-1][0] == "os"


def test_timeit_setup_code_on_the_magic_line_runs_once_before_the_body():
    kept, notes = python_lines("%%timeit -n 5 -r 2 a = [1, 2]\ntotal = sum(a)", 4)
    assert kept == ["a = [1, 2]", "total = sum(a)"]
    assert "run once" in notes[0]


def _run(text: str) -> str:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(text, "nb", "exec"), {"__name__": "__main__"})
    return out.getvalue()


@pytest.mark.parametrize(
    "cell, shown",
    [
        ("t = (5, 8)\nt", "(5, 8)\n"),
        ("t = (5, 8)\nt;", ""),  # a ';' silences it, as in Jupyter
        ("t = (5, 8)\nt  ;  # quiet", ""),
        ("x = 3; x", "3\n"),
        ("print('hi')", "hi\n"),  # None is not shown
        ("a, b = 1, 'é'\na, \\\n  b  # two lines", "(1, 'é')\n"),
        ("'é'; len([1,\n 2])", "2\n"),
        ("(y := 4)", "4\n"),
        ("if True:\n    5", ""),  # not a top-level expression
        ("5\nx = 1", ""),  # not the last statement
    ],
)
def test_a_cells_last_expression_is_shown_as_jupyter_shows_it(cell, shown):
    source = source_of("a.ipynb", notebook_bytes(new_code_cell(cell)))
    assert _run(source.text) == shown
    assert len(source.text.split("\n")) - 2 == len(cell.split("\n")) + (1 if shown else 0)
    assert ("__grader_display__" in source.text) == bool(shown)  # a helper only where used


def test_each_cell_shows_its_own_last_value_and_lines_keep_their_cells():
    source = source_of(
        "a.ipynb",
        notebook_bytes(
            new_markdown_cell("# text"),
            new_code_cell("import numpy as np\nt = np.zeros((5, 8))\nt.shape"),
            new_code_cell("len(t)"),
            new_code_cell("%%timeit\nlen(t)"),
            new_code_cell("%%time\nt.ndim"),
        ),
    )
    assert _run(source.text) == "(5, 8)\n5\n2\n"
    lines = source.text.split("\n")
    where = SourceMap(source.source_map.origins).where
    assert where(next(i for i, t in enumerate(lines, 1) if "t.shape" in t)) == "cell 2, line 3"
    assert where(next(i for i, t in enumerate(lines, 1) if "len(t)" in t)) == "cell 3, line 1"
    assert where(next(i for i, t in enumerate(lines, 1) if "t.ndim" in t)) == "cell 5, line 2"


def test_the_display_helper_uses_the_real_print_whatever_the_cells_name_print():
    source = source_of("a.ipynb", notebook_bytes(new_code_cell("print = None\nrepr = None\n41 + 1")))
    assert _run(source.text) == "42\n"


def test_a_folder_named_like_a_py_file_is_no_candidate(tmp_path):
    """frank/sub.py/ is a folder: skipped as a candidate, so frank/work.py is the hand-in
    (a link named .py stays a candidate, and is refused)."""
    (tmp_path / "sub.py").mkdir()
    (tmp_path / "sub.py" / "x.py").write_text("y = 2\n")
    (tmp_path / "work.py").write_text("x = 1\n")
    assert read_submission(str(tmp_path)).name == "work.py"
    (tmp_path / "work.py").unlink()
    (tmp_path / "work.py").symlink_to(tmp_path / "sub.py" / "x.py")
    with pytest.raises(SubmissionError, match="is a symbolic link"):
        read_submission(str(tmp_path))


def test_batch_names_a_submission_from_the_class_folder_never_by_an_absolute_path(tmp_path):
    """What the student handed in (bob/, carol.py), not where the grading machine keeps it."""
    from grader.classroom.discovery import discover

    klass = tmp_path / "class"
    (klass / "bob").mkdir(parents=True)
    (klass / "bob" / "a.py").write_text("x = 1\n")
    (klass / "bob" / "b.py").write_text("x = 2\n")
    (klass / "carol").mkdir()
    (klass / "carol" / "solution.py").write_text("x = 1\n")
    (klass / "dan.py").symlink_to(klass / "carol" / "solution.py")
    for folder in (str(klass), str(klass) + "/"):
        found = {s.student: s for s in discover(folder).submissions}
        assert found["bob"].problem.startswith("bob: holds 2 .py or .ipynb files (a.py, b.py)")
        assert found["dan"].problem.startswith("dan.py: is a symbolic link")
        assert (found["bob"].path, found["carol"].path, found["dan"].path) == (
            "bob",
            os.path.join("carol", "solution.py"),
            "dan.py",
        )
        assert not any(str(tmp_path) in (s.problem or "") + s.path for s in found.values())
