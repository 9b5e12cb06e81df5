"""Reading a submission: its bytes, read once, the only thing of it the grader ever uses.

Everything about a submission is the student's, the file itself included: it may be a
symbolic link to the reference or to a secret of the grading machine, a FIFO that blocks
whoever opens it, a device that never ends, or 100 MB. So a submission is opened without
following links (``O_NOFOLLOW``, and without blocking), must be a regular file by
``fstat`` of what was opened, and is read up to a size cap; inside a folder, links and
special files are refused by name before anything is opened. What comes out is bytes in
memory: the sandbox is sent those bytes, never a path to the original.

A submission is a Python file (``.py``) or a Jupyter notebook (``.ipynb``), the suffix in
any case (``A.PY`` runs in Python as ``a.py`` does); ``submission_source`` turns either
into the code that runs, decoded as Python decodes it.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from grader.student_text import name as visible_name
from grader.submission.notebook import (
    NotebookProblem,
    holds_notebook,
    is_notebook,
    left_out_note,
    notebook_code,
)
from grader.submission.source_map import SourceMap

if TYPE_CHECKING:
    from grader.submission.source_numbers import SourceNumbers

MAX_SOURCE_BYTES = 1 << 20
SUFFIXES = (".py", ".ipynb")  # compared in lower case
PREFERRED_STEMS = ("solution", "submission", "main")  # in a folder of several


class SubmissionError(Exception):
    """The submission cannot be graded at all (missing, a link, a special file, too large,
    an ambiguous folder); the message says which file and what to do."""


@dataclass(frozen=True)
class SubmissionFile:
    """A submission as read: where it was found (for messages) and its bytes."""

    path: str  # as given or found (shown to people, never opened again)
    data: bytes

    @property
    def name(self) -> str:
        return os.path.basename(self.path)


def source_stem(name: str) -> str | None:
    """The name without its .py or .ipynb suffix (in any case), or None when it has
    neither, is hidden (a dot first) or is nothing but the suffix."""
    lower = name.lower()
    for suffix in SUFFIXES:
        if lower.endswith(suffix) and len(name) > len(suffix) and not name.startswith("."):
            return name[: -len(suffix)]
    return None


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def refusal(path: str, what: str) -> SubmissionError:
    return SubmissionError(
        f"{path}: is {what}, not a regular file. Hand in the .py or .ipynb file itself (a copy, not a link)."
    )


def too_large(path: str) -> SubmissionError:
    hint = (
        " Clear the notebook's outputs (Kernel > Restart & Clear Output) and save it again."
        if path.lower().endswith(".ipynb")
        else ""
    )
    return SubmissionError(
        f"{path}: is larger than {MAX_SOURCE_BYTES // 1024} KiB; a solution "
        f"to this task is far smaller.{hint}"
    )


def read_submission(path: str) -> SubmissionFile:
    """The submission at ``path``: a .py or .ipynb file, or a folder holding one (or a
    solution.py among several), as Gradescope and course repositories hand them over."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise SubmissionError(f"{path}: no such file. Give the path of a .py or .ipynb submission.") from None
    except OSError as exc:
        raise SubmissionError(f"{path}: cannot be read ({exc.strerror}).") from None
    if stat.S_ISDIR(info.st_mode):
        return _from_folder(path)
    return _read_file(path)


def hand_ins_for(task_id: str, names: Iterable[str]) -> list[str]:
    """The entries of a course repository's solutions/ folder that are a task's hand-in:
    ``<task id>.py`` or ``.ipynb`` (the suffix in any case), or ``<task id>`` itself (a
    folder holding one). Compared by name only: the caller decides what each entry is."""
    return sorted(n for n in names if (source_stem(n) or n) == task_id)


def choose_in_folder(folder: str, names: Iterable[str]) -> str:
    """Which of a folder's .py and .ipynb entries (``names``, folders left out) is the
    hand-in: the only one; among several, the one named solution (then submission, main),
    when exactly one has that name. SubmissionError, naming ``folder``, otherwise."""
    names = sorted(names)
    if len(names) == 1:
        return names[0]
    for stem in PREFERRED_STEMS:
        named = [n for n in names if (source_stem(n) or "").lower() == stem]
        if len(named) > 1:
            raise SubmissionError(f"{folder}: holds {' and '.join(named)}; keep one of them.")
        if named:
            return named[0]
    raise SubmissionError(
        f"{folder}: holds {len(names)} .py or .ipynb files ({', '.join(names[:5]) or 'none'}); "
        f"submit exactly one, or name the solution {PREFERRED_STEMS[0]}.py "
        f"(or {PREFERRED_STEMS[0]}.ipynb)."
    )


def _from_folder(folder: str) -> SubmissionFile:
    """The folder's hand-in, as ``choose_in_folder`` chooses it, read safely."""
    try:
        # A folder named sub.py is no file to hand in; a link or a FIFO is, and is refused below.
        entries = {
            e.name: e
            for e in os.scandir(folder)
            if source_stem(e.name) is not None and not e.is_dir(follow_symlinks=False)
        }
    except OSError as exc:
        raise SubmissionError(f"{folder}: cannot be read ({exc.strerror}).") from None
    chosen = choose_in_folder(folder, entries)
    entry = entries[chosen]
    path = os.path.join(folder, chosen)
    if entry.is_symlink() or not entry.is_file(follow_symlinks=False):
        raise refusal(path, _kind(entry.stat(follow_symlinks=False).st_mode))
    return _read_file(path)


def _read_file(path: str) -> SubmissionFile:
    """Open without following a link or blocking on a FIFO; check what was opened."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if os.path.islink(path):
            raise refusal(path, "a symbolic link") from None
        raise SubmissionError(f"{path}: cannot be read ({exc.strerror}).") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise refusal(path, _kind(info.st_mode))
        if info.st_size > MAX_SOURCE_BYTES:
            raise too_large(path)
        chunks, size = [], 0
        while size <= MAX_SOURCE_BYTES:  # a file that grows while read stops at the cap
            chunk = os.read(fd, MAX_SOURCE_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise SubmissionError(f"{path}: cannot be read ({exc.strerror}).") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > MAX_SOURCE_BYTES:  # it grew while it was read
        raise too_large(path)
    return SubmissionFile(path, data)


@dataclass(frozen=True)
class SourceScan:
    """What the static checks read of a submission's code (checks/imports.py ``scan``): its
    imports, the routes it has to other code, where its functions are defined; or why it
    could not be read (``problem``). Plain data, made in a bounded child (source_scan.py)."""

    imports: tuple[tuple[str, int], ...] = ()  # (module, line) of every import
    routes: tuple[str, ...] = ()  # each route with where it is
    definitions: tuple[tuple[str, int], ...] = ()  # (function name, line) of every def
    problem: str = ""

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

    def where(self, line: int) -> str:
        """A line of ``text``, as its author finds it: "line 7", "cell 4, line 2"."""
        return self.source_map.where(line)


def submission_source(submission: SubmissionFile, display: tuple[str, ...] = ()) -> PythonSource:
    """The code of a submission: a notebook's code cells (by its name, .ipynb in any case),
    else the file as Python reads a .py file. ``display``: the task's display libraries
    (notebook.notebook_code)."""
    shown = visible_name(submission.name)
    if is_notebook(submission.name):
        try:
            notebook = notebook_code(submission.data, display)
        except NotebookProblem as exc:
            return PythonSource(None, f"{shown} {exc}")
        source = python_source(notebook.text.encode("utf-8"))
        notes = (left_out_note(notebook.left_out),) if notebook.left_out else ()
        return PythonSource(source.text, source.problem, source.code, notebook.source_map, notes)
    if holds_notebook(submission.data):
        return PythonSource(
            None,
            f"{shown} holds a Jupyter notebook (its JSON), not Python source: hand it in as a .ipynb file",
        )
    return python_source(submission.data)


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
    import io
    import tokenize

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
