"""A Jupyter notebook handed in: its code cells, in order, as ONE Python module, and where
every line of that module came from.

The notebook is read with the standard notebook library (``nbformat.reads(...,
as_version=4)``, so format 3 is converted, then validated); a file that is not a valid
notebook, or one written for another language's kernel, is refused with what is wrong.
Of the notebook only the code cells' source is used: markdown and raw cells are text, and
the stored outputs and execution counts are the student's own record, which may say
anything; a script's answer comes from running the code, never from them.

IPython's own syntax is not Python and is never run: a line magic (``%matplotlib
inline``), a shell escape (``!pip install x``, ``files = !ls``) or a help request
(``?obj``, ``obj?``) becomes ``pass`` at its indentation. A cell that opens with
``%%time``, ``%%timeit`` or ``%%capture`` keeps its body, which IPython runs as Python (once
here); one that opens with any other cell magic (``%%bash``, ``%%writefile``...) is left out
whole, since that magic decides what its body means. Each is named in a note for the report.
As Jupyter does, a cell's last expression statement (unless the cell ends with ``;``) is
shown: wrapped in place in a display helper defined on line 2, so no line moves. Only lines where a
statement starts are looked at: the same text inside a string or a bracket is Python's.

The module is the code that runs *and* the code the import scan reads (both get these
bytes), so nothing left out can hide an import, and nothing kept is unseen. Its first line
is a UTF-8 coding declaration: a cell's text is already text, and a ``# coding:`` line in
the first cell (UTF-7, say) must not make Python read it as something else.
"""

from __future__ import annotations

import ast
import functools
import io
import json
import tokenize
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from grader.student_text import line as one_line
from grader.submission import python_file
from grader.submission.ipython_syntax import HIDES_VALUE, python_lines
from grader.submission.python_file import PythonSource, python_source
from grader.submission.source_map import SourceMap

SUFFIXES = (".ipynb",)  # compared in lower case
HELD_AS = "a Jupyter notebook (its JSON)"  # what a file named .py holds, when it holds a notebook
TOO_LARGE_HINT = " Clear the notebook's outputs (Kernel > Restart & Clear Output) and save it again."
HEADER = "# -*- coding: utf-8 -*-"  # line 1 of the module (see the module's docstring)
NOTES_SHOWN = 10
# Jupyter shows the value of a cell's last expression (its repr, unless None): the module
# does the same, printing it. The helper is the module's own code (the student may call it,
# and gets nothing print and repr do not give); defaults keep the builtins of line 2.
DISPLAY = "__grader_display__"
DISPLAY_HELPER = (
    f"def {DISPLAY}(value, print=print, repr=repr): print(repr(value)) if value is not None else None"
)
# With display libraries (task.yaml imports: display), a value of theirs (a figure, an axes'
# artists, plt.hist's counts and bars) is a picture, which Jupyter draws and the grader does
# not: shown as nothing, so a cell ending ``plt.imshow(table)`` prints no answer.
DRAWING_HELPER = (
    f"def {DISPLAY}(value, print=print, repr=repr, type=type, str=str, any=any, "
    "list=list, tuple=tuple, drawing={names}): print(repr(value)) if value is not None "
    "and not any(str(type(v).__module__).partition('.')[0] in drawing for v in (value if "
    "type(value) in (list, tuple) else (value,))) else None"
)
READ_VERSIONS = (3, 4)  # nbformat major versions the library reads (4 since 2015)


class NotebookProblem(Exception):
    """The file cannot be run as a notebook; the message says why (after "the file ...")."""


@dataclass(frozen=True)
class NotebookCode:
    text: str  # the module: the code cells in order, IPython syntax left out
    source_map: SourceMap  # module line -> (cell, line in that cell)
    left_out: tuple[str, ...]  # what was not run, each "cell 2, line 1: %matplotlib inline"
    # The cells Python cannot compile, each (cell, what it says): left out of the module
    # (blank lines in their place), so the other cells run and the import scan reads exactly
    # what runs; reported as failed cells (``failed_cells_note``).
    uncompiled: tuple[tuple[int, str], ...] = ()


# --------------------------------------------------------------------------- reading


def _shown(text: object, max_bytes: int = 120) -> str:
    return one_line(text, max_bytes)


def _json_object(data: bytes) -> tuple[str, dict[str, Any]]:
    """The file's JSON object, or NotebookProblem saying what it is instead."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotebookProblem(
            f"is not a notebook: it is not UTF-8 text (byte {exc.start}), "
            "and Jupyter saves notebooks as UTF-8 JSON"
        ) from None
    text = text.removeprefix("\ufeff")
    if not text.strip():
        raise NotebookProblem("is empty: a notebook is the JSON file Jupyter saves")
    try:
        raw = json.loads(text)
    except RecursionError:
        raise NotebookProblem("is not a notebook Jupyter saved: its JSON is nested too deeply") from None
    except ValueError as exc:
        where = (
            f" (line {exc.lineno}, column {exc.colno}: {exc.msg})"
            if isinstance(exc, json.JSONDecodeError)
            else ""
        )
        hint = (
            f"; it looks like Python source: hand that in as a {python_file.SUFFIXES[0]} file"
            if not text.lstrip().startswith("{")
            else ""
        )
        raise NotebookProblem(f"is not a notebook: it is not JSON{where}{hint}") from None
    if not isinstance(raw, dict):
        raise NotebookProblem("is not a notebook: its JSON is not an object with cells")
    return text, raw


def _check_cells(raw: dict) -> None:
    """What the library would trip over before its validator says where: cells that are
    not a list, a cell's source that is not text (format 4; format 3 is converted), and in
    format 3 what converting would blow up (a heading cell of level 200000000 becomes that
    many '#'): Jupyter's headings have levels 1 to 6."""
    if raw.get("nbformat") == 3:
        worksheets = raw.get("worksheets")
        for sheet in worksheets if isinstance(worksheets, list) else ():
            cells = sheet.get("cells") if isinstance(sheet, dict) else None
            for number, cell in enumerate(cells if isinstance(cells, list) else (), start=1):
                level = cell.get("level", 1) if isinstance(cell, dict) else 1
                if (
                    isinstance(cell, dict)
                    and cell.get("cell_type") == "heading"
                    and not (type(level) is int and 1 <= level <= 6)
                ):
                    raise NotebookProblem(
                        f"is not a notebook Jupyter saved: heading cell {number} "
                        f"has level {_shown(level, 40)} (Jupyter's are 1 to 6)"
                    )
    if raw.get("nbformat") != 4:
        return
    cells = raw.get("cells")
    if not isinstance(cells, list):
        raise NotebookProblem("is not a valid notebook: it has no list of cells")
    for number, cell in enumerate(cells, start=1):
        source = cell.get("source", "") if isinstance(cell, dict) else None
        if not (
            isinstance(source, str) or (isinstance(source, list) and all(isinstance(s, str) for s in source))
        ):
            raise NotebookProblem(
                f"is not a valid notebook: cell {number} is not a cell whose "
                "source is text; open it in Jupyter and save it again"
            )


def _path(path: Iterable[object]) -> str:
    """Where in the notebook a validation error is: "cell 3, source"."""
    parts = list(path)
    shown = []
    if len(parts) >= 2 and parts[0] == "cells" and type(parts[1]) is int:
        shown.append(f"cell {parts[1] + 1}")
        parts = parts[2:]
    shown += [_shown(p, 60) for p in parts]
    return ", ".join(shown)


def read_notebook(data: bytes) -> Any:
    """The notebook in format 4 (nbformat's NotebookNode), validated, with a Python kernel."""
    text, raw = _json_object(data)
    version = raw.get("nbformat")
    if type(version) is not int:
        raise NotebookProblem("is not a notebook: its JSON has no 'nbformat' version number")
    if version not in READ_VERSIONS:
        raise NotebookProblem(
            f"is a notebook of format version {_shown(version, 40)}, and the "
            "notebook library reads versions 3 and 4 (what Jupyter saves); "
            "save it from Jupyter again"
        )
    _check_cells(raw)
    import nbformat

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (nbformat warns about repairs; the verdict is below)
            notebook = nbformat.reads(text, as_version=4)
            nbformat.validate(notebook)
    except RecursionError:
        raise NotebookProblem("is not a notebook Jupyter saved: its JSON is nested too deeply") from None
    except Exception as exc:  # ValidationError, and whatever a malformed file trips in the library
        message = getattr(exc, "message", None) or str(exc)
        where = _path(getattr(exc, "absolute_path", ()) or ())
        raise NotebookProblem(
            f"is not a valid notebook ({where + ': ' if where else ''}"
            f"{_shown(str(message).splitlines()[0] if str(message) else type(exc).__name__, 300)}); "
            "open it in Jupyter and save it again"
        ) from None
    _require_python(notebook)
    return notebook


def _require_python(notebook: Any) -> None:
    metadata = notebook.get("metadata") or {}
    kernelspec, info = metadata.get("kernelspec") or {}, metadata.get("language_info") or {}
    for said in (
        kernelspec.get("language") if isinstance(kernelspec, dict) else None,
        info.get("name") if isinstance(info, dict) else None,
    ):
        if (
            isinstance(said, str)
            and said.strip()
            and not said.strip().lower().startswith(("python", "ipython"))
        ):
            raise NotebookProblem(
                f"is a notebook for the {_shown(said, 40)} language (its "
                "kernel), not Python: write the solution in a Python notebook"
            )


def holds_notebook(data: bytes) -> bool:
    """Whether these bytes (of a file named .py) are a notebook's JSON."""
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head.startswith(b"{") or b'"nbformat"' not in data:
        return False
    try:
        raw = json.loads(data.decode("utf-8", "replace").lstrip("\ufeff"))
    except (ValueError, RecursionError):
        return False
    return isinstance(raw, dict) and "nbformat" in raw


def may_hold_notebook(data: bytes) -> bool:
    """Whether a file may be a notebook's JSON, whatever its name (a cheap look at its first
    bytes: the reader decides)."""
    return data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"{"


@functools.cache
def warm_reader() -> None:
    """Import the notebook library and build its validator here, once per process, on a
    notebook of our own: each child forked to read a student's notebook then starts with
    them (0.15 s each otherwise)."""
    import nbformat

    nbformat.validate(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")]))


def notebook_source(data: bytes, shown: str, display: tuple[str, ...]) -> PythonSource:
    """A notebook's code (the registry's reader, formats.py): its code cells as one module,
    decoded as Python decodes it, with the map back to the cells and a note of what was left
    out; refused, naming the file as ``shown``, when it cannot be run as a notebook.
    ``display``: the task's display libraries (``notebook_code``)."""
    try:
        notebook = notebook_code(data, display)
    except NotebookProblem as exc:
        return PythonSource(None, f"{shown} {exc}")
    source = python_source(notebook.text.encode("utf-8"))
    notes = (left_out_note(notebook.left_out),) if notebook.left_out else ()
    return PythonSource(
        source.text, source.problem, source.code, notebook.source_map, notes, uncompiled=notebook.uncompiled
    )


def notebook_head(data: bytes) -> tuple[int | None, str]:
    """Where a comment about the whole notebook is (a sample's declared verdict): its first
    code or markdown cell, and that cell's number; ValueError saying why it is no notebook."""
    try:
        cells = read_notebook(data).cells
    except NotebookProblem as exc:
        raise ValueError(str(exc)) from None
    for number, cell in enumerate(cells, start=1):
        if cell.cell_type in ("code", "markdown"):
            return number, str(cell.source)
    return None, ""


# --------------------------------------------------------------------------- the module


def display_helper(display: tuple[str, ...] = ()) -> str:
    """Line 2 of a notebook's module when a cell shows a value (see DISPLAY_HELPER)."""
    names = tuple(n for n in display if n.isidentifier())
    return DRAWING_HELPER.format(names=repr(names)) if names else DISPLAY_HELPER


def notebook_code(data: bytes, display: tuple[str, ...] = ()) -> NotebookCode:
    """The notebook's code cells as one module; NotebookProblem when it cannot be.
    ``display``: the task's display libraries, whose values a cell's last line does not show."""
    notebook = read_notebook(data)
    lines, origins, written = [HEADER], [(0, 0)], [""]
    left_out: list[str] = []
    uncompiled: list[tuple[int, str]] = []
    displays = False
    for number, cell in enumerate(notebook.cells, start=1):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source")
        if not isinstance(source, str):  # (validated; a library that let one through)
            raise NotebookProblem(f"is not a valid notebook: the source of cell {number} is not text")
        if "\x00" in source:
            raise NotebookProblem(
                f"holds a null character (\\x00) in cell {number}, which Python "
                "refuses in source code; delete it and save again"
            )
        try:
            source.encode("utf-8")
        except UnicodeEncodeError:
            raise NotebookProblem(
                f"holds text that is not valid Unicode in cell {number} (a lone "
                "surrogate); delete it and save again"
            ) from None
        kept, notes = python_lines(source, number)
        left_out += notes
        own = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")  # (as python_lines splits)
        problem = _compile_problem(kept, own, number)
        if problem:  # the cell fails, as in Jupyter, and the others run
            uncompiled.append((number, problem))
            kept = [""] * len(kept)
        if _opening_magic(source) not in HIDES_VALUE:
            shown = _display_last(kept)
            displays = displays or shown != kept
            kept = shown
        for in_cell, text in enumerate(kept, start=1):
            lines.append(text)
            origins.append((number, in_cell))
            written.append(own[in_cell - 1] if in_cell <= len(own) else text)
    if displays:  # defined before any cell runs, with the builtins it was made with
        lines.insert(1, display_helper(display))
        origins.insert(1, (0, 0))
        written.insert(1, "")
    return NotebookCode(
        "\n".join(lines) + "\n",
        SourceMap(tuple(origins), tuple(written)),
        tuple(left_out),
        tuple(uncompiled),
    )


def _compile_problem(kept: list[str], own: list[str], number: int) -> str:
    """Why Python cannot compile a cell on its own ("" when it can), in the student's
    words: "cell 3 raised SyntaxError: ...: x = (". Each cell is compiled alone, as Jupyter
    runs it: a cell that opens a string or a bracket the next one closes is refused here,
    and not read as one statement across cells (which the import scan would see and the
    cell-by-cell run would not). Compiling runs nothing."""
    try:
        compile("\n".join(kept) + "\n", f"<cell {number}>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, OverflowError) as exc:
        at = getattr(exc, "lineno", None)
        at = at if type(at) is int and 1 <= at <= len(own) else None
        message = getattr(exc, "msg", None) or str(exc)
        quoted = f": {_shown(own[at - 1].strip(), 300)}" if at is not None and own[at - 1].strip() else ""
        where = f" (line {at})" if at is not None and at != 1 else ""
        return f"cell {number} raised {type(exc).__name__}: {_shown(message, 300)}{quoted}{where}"
    return ""


def _opening_magic(source: str) -> str:
    """The cell magic a cell opens with (``%%time``), or ""."""
    first = next((text.strip() for text in source.splitlines() if text.strip()), "")
    return first.split()[0] if first.startswith("%%") else ""


def _display_last(lines: list[str]) -> list[str]:
    """The cell with its last statement shown as Jupyter shows it, when that statement is an
    expression and the cell does not end with ``;``: wrapped in ``DISPLAY(( ... ))`` in
    place, so every line keeps its number. A cell Python cannot parse is left as it is
    (running it says why)."""
    text = "\n".join(lines)
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return lines
    if not tree.body or not isinstance(tree.body[-1], ast.Expr) or _ends_with_semicolon(text):
        return lines
    node = tree.body[-1]
    if node.end_lineno is None or node.end_col_offset is None:
        return lines
    shown = list(lines)
    # the end first: on one line, the start's offset stays right (offsets are UTF-8 bytes)
    shown[node.end_lineno - 1] = _insert(shown[node.end_lineno - 1], node.end_col_offset, "))")
    shown[node.lineno - 1] = _insert(shown[node.lineno - 1], node.col_offset, f"{DISPLAY}((")
    return shown


def _insert(line: str, byte_offset: int, text: str) -> str:
    raw = line.encode("utf-8")
    return raw[:byte_offset].decode("utf-8") + text + raw[byte_offset:].decode("utf-8")


def _ends_with_semicolon(text: str) -> bool:
    """IPython's rule: a cell whose last token (comments aside) is ``;`` shows nothing."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return False
    for token in reversed(tokens):
        if token.type in (
            tokenize.ENDMARKER,
            tokenize.NL,
            tokenize.NEWLINE,
            tokenize.COMMENT,
            tokenize.INDENT,
            tokenize.DEDENT,
        ):
            continue
        return token.type == tokenize.OP and token.string == ";"
    return False


FAILED_CELLS_SHOWN = 10


def failed_cells_note(failed: tuple[str, ...], more: int = 0) -> str:
    """The report's words on the notebook's cells that raised (each "cell 4 raised ..."),
    at most FAILED_CELLS_SHOWN of them and how many more."""
    shown = "; ".join(failed[:FAILED_CELLS_SHOWN])
    more += max(0, len(failed) - FAILED_CELLS_SHOWN)
    if more > 0:
        shown += f"; and {more} more {'cell' if more == 1 else 'cells'} raised"
    return (
        f"{shown}. The notebook went on with the next cell, as Jupyter does; what the "
        "other cells defined is graded, and a function a failed cell left undefined costs its checks"
    )


def left_out_note(left_out: tuple[str, ...]) -> str:
    """The report's note on what of a notebook was not run."""
    shown = "; ".join(left_out[:NOTES_SHOWN])
    more = len(left_out) - NOTES_SHOWN
    if more > 0:
        shown += f"; and {more} more"
    return (
        "note: left out of your notebook and never run, because IPython syntax (magics, "
        f"shell commands, help requests) is not Python: {shown}"
    )
