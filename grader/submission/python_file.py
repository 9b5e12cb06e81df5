"""A Python file handed in: its bytes decoded exactly as Python decodes a source file, and
the record of a submission's code that every format makes (``PythonSource``).

A declaration of an encoding that does not read ASCII as ASCII is refused (``python_source``),
so what the import scan reads is the code that runs.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from grader.submission.source_map import SourceMap

if TYPE_CHECKING:
    from grader.submission.source_numbers import SourceNumbers

SUFFIXES = (".py",)  # compared in lower case: Python runs A.PY as it runs a.py
HELD_AS = "Python source"  # what a file of another format's name holds, when it holds this
_COMPILED = f"compiled Python, not source: hand in the {SUFFIXES[0]} file"
LOOKALIKES = ((".pyc", _COMPILED), (".pyo", _COMPILED))  # no hand-in, though named like one


@dataclass(frozen=True)
class SourceScan:
    """What the static checks read of a submission's code (import_scan.py ``scan_imports``): its
    imports, the routes it has to other code, where its functions are defined; or why it
    could not be read (``problem``). Plain data, made in a bounded child (source_scan.py)."""

    imports: tuple[tuple[str, int], ...] = ()  # (module, line) of every import
    routes: tuple[str, ...] = ()  # each route with where it is
    definitions: tuple[tuple[str, int], ...] = ()  # (function name, line) of every def
    problem: str = ""
    # what the functions under test reach of a display library, each with where (imports.py);
    # None: not known (a reader that does not look, as an older install's): no display
    # library is then let through the imports check
    display_uses: tuple[str, ...] | None = ()

    def defined_at(self, names: Collection[str]) -> dict[str, int]:
        """The line of the first definition of each of ``names`` that the file defines."""
        found: dict[str, int] = {}
        for name, line in self.definitions:
            if name in names:
                found.setdefault(name, line)
        return found


@dataclass(frozen=True)
class PythonSource:
    """A submission's code as Python reads it, or why it is refused. ``code`` is what the
    sandbox runs and ``text`` what the import scan reads, the same code decoded as Python
    decodes it: the file's own bytes for a .py file, the module made of a notebook's code
    cells for a .ipynb (notebook.py), whose lines ``source_map`` traces back to cells."""

    text: str | None
    problem: str = ""
    code: bytes = b""
    source_map: SourceMap = SourceMap()
    notes: tuple[str, ...] = ()  # what of the submission was not run, and why (for the report)
    scan: SourceScan = SourceScan()
    numbers: SourceNumbers | None = None  # the numbers its text holds, where asked for
    # A notebook's cells Python cannot compile, (cell, what it says), left out of ``text``
    # and ``code`` (notebook.py NotebookCode.uncompiled): failed cells in the report.
    uncompiled: tuple[tuple[int, str], ...] = ()

    def where(self, line: int) -> str:
        """A line of ``text``, as its author finds it: "line 7", "cell 4, line 2"."""
        return self.source_map.where(line)


def _line_at(data: bytes, offset: int) -> int:
    """The line (1-based) of a byte, counting line ends as Python does."""
    return len(re.findall(rb"\r\n|\r|\n", data[:offset])) + 1


def _not_utf8(data: bytes) -> str:
    """Python's reason for a file that is not UTF-8 and declares nothing else."""
    try:
        data.decode("utf-8")
        return (
            "Python refuses its first lines (invalid or missing encoding declaration); save the file as UTF-8"
        )
    except UnicodeDecodeError as exc:
        line, byte = _line_at(data, exc.start), data[exc.start]
        return (
            f"line {line} is not valid UTF-8 and the file declares no other encoding, so "
            f"Python refuses it (SyntaxError: Non-UTF-8 code starting with '\\x{byte:02x}' "
            f"on line {line}, but no encoding declared); save the file as UTF-8"
        )


def python_source(data: bytes) -> PythonSource:
    """Decode the bytes exactly as Python decodes a source file (a UTF-8 BOM, a PEP 263
    coding declaration, else UTF-8), so that what is scanned here is the code that runs.

    A declaration of an encoding that does not read ASCII as ASCII (UTF-7, UTF-16...) is
    refused: in such a file the bytes of ``import os`` need not spell it, so no reader of
    the bytes, human or program, sees the code Python runs."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        reason = getattr(exc, "msg", None) or str(exc)
        if "invalid or missing encoding declaration" in reason:
            return PythonSource(None, _not_utf8(data))
        return PythonSource(
            None,
            f"Python refuses its encoding declaration ({reason}); save "
            "the file as UTF-8 and remove the coding line",
        )
    if not _reads_ascii_as_ascii(encoding):
        return PythonSource(
            None,
            f"it declares the encoding '{encoding}', which hides what the "
            "code says; save the file as UTF-8 and remove the coding line",
        )
    try:
        return PythonSource(data.decode(encoding), code=data)
    except UnicodeDecodeError as exc:
        if encoding in ("utf-8", "utf-8-sig"):
            return PythonSource(None, _not_utf8(data))
        return PythonSource(
            None,
            f"line {_line_at(data, exc.start)} is not valid {encoding} (the "
            f"encoding its coding line declares: byte 0x{data[exc.start]:02x}, "
            f"{exc.reason}), so Python refuses it; save the file as UTF-8",
        )
    except Exception as exc:  # whatever a codec raises: the file is refused, never the grader
        return PythonSource(
            None, f"it cannot be read as {encoding} ({type(exc).__name__}); save the file as UTF-8"
        )


def _reads_ascii_as_ascii(encoding: str) -> bool:
    ascii_bytes = bytes(range(128))
    try:
        return ascii_bytes.decode(encoding) == ascii_bytes.decode("ascii")
    except Exception:  # LookupError, UnicodeError ('undefined', 'punycode'), codecs' own
        return False


def python_file_source(data: bytes, shown: str, display: tuple[str, ...]) -> PythonSource:
    """A .py file's code (the registry's reader, formats.py): its bytes as Python reads them.
    ``shown`` and ``display`` are unused: Python's reasons name no file, and a script shows
    only what it prints."""
    return python_source(data)


def python_head(data: bytes) -> tuple[int | None, str]:
    """Where a comment about the whole file is (a sample's declared verdict): its text, in
    no cell; undecodable bytes replaced, so a declaration is read whatever follows it."""
    return None, python_source(data).text or data.decode("utf-8", "replace")
