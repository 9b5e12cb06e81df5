"""Reading a submission: its bytes, read once, the only thing of it the grader ever uses.

Everything about a submission is the student's, the file itself included: it may be a
symbolic link to the reference or to a secret of the grading machine, a FIFO that blocks
whoever opens it, a device that never ends, or 100 MB. So a submission is opened without
following links (``O_NOFOLLOW``, and without blocking), must be a regular file by
``fstat`` of what was opened, and is read up to a size cap; inside a folder, links and
special files are refused by name before anything is opened. What comes out is bytes in
memory: the sandbox is sent those bytes, never a path to the original.

A submission is a file of one of the hand-in formats (formats.py: a Python file ``.py``, a
Jupyter notebook ``.ipynb``), the suffix in any case (``A.PY`` runs in Python as ``a.py``
does); ``submission_source`` turns it into the code that runs, by its format's reader.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass

from grader.student_text import name as visible_name
from grader.submission.formats import (
    accepted_suffixes,
    accepted_text,
    format_of,
    named_each_way,
    source_of,
)
from grader.submission.python_file import PythonSource

MAX_SOURCE_BYTES = 1 << 20
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
    """The name without a hand-in format's suffix (in any case), or None when it has
    none, is hidden (a dot first) or is nothing but the suffix."""
    lower = name.lower()
    for suffix in accepted_suffixes():
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
        f"{path}: is {what}, not a regular file. Hand in the {accepted_text()} file itself (a copy, not a link)."
    )


def too_large(path: str) -> SubmissionError:
    hint = format_of(path).too_large_hint
    return SubmissionError(
        f"{path}: is larger than {MAX_SOURCE_BYTES // 1024} KiB; a solution "
        f"to this task is far smaller.{hint}"
    )


def read_submission(path: str) -> SubmissionFile:
    """The submission at ``path``: a hand-in file (formats.py), or a folder holding one (or a
    solution.py among several), as Gradescope and course repositories hand them over."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise SubmissionError(
            f"{path}: no such file. Give the path of a {accepted_text()} submission."
        ) from None
    except OSError as exc:
        raise SubmissionError(f"{path}: cannot be read ({exc.strerror}).") from None
    if stat.S_ISDIR(info.st_mode):
        return _from_folder(path)
    return _read_file(path)


def hand_ins_for(task_id: str, names: Iterable[str]) -> list[str]:
    """The entries of a course repository's solutions/ folder that are a task's hand-in:
    ``<task id>`` with a hand-in suffix (in any case), or ``<task id>`` itself (a
    folder holding one). Compared by name only: the caller decides what each entry is."""
    return sorted(n for n in names if (source_stem(n) or n) == task_id)


def choose_in_folder(folder: str, names: Iterable[str]) -> str:
    """Which of a folder's hand-in entries (``names``, folders left out) is the
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
        f"{folder}: holds {len(names)} {accepted_text()} files ({', '.join(names[:5]) or 'none'}); "
        f"submit exactly one, or name the solution {named_each_way(PREFERRED_STEMS[0])}."
    )


NAMED_LISTED = 10  # a missing file's message lists at most this many of the folder's names
_NAMED_SCANNED = 1000  # ... found among at most this many entries (an upload may hold many)
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be the name an instructor gives a hand-in file (``grader check
    --file``, ``grader gradescope --file``), or None: a plain name (letters, digits, ``_ . + -``;
    no folder, no hidden file, no space) with a hand-in suffix."""
    if not _PLAIN_NAME.fullmatch(name) or len(name) > 200:
        return (
            f"{visible_name(name)!r} is not a plain file name: use letters, digits and _ . + - "
            "only, no folder and no space (e.g. table_shape.py)"
        )
    if source_stem(name) is None:
        return f"{name!r} does not end in {accepted_text()}"
    return None


def read_named(folder: str, name: str) -> SubmissionFile:
    """The file ``name`` of the folder ``folder`` (an upload: Gradescope's submission folder),
    read as any hand-in is (never a link, a special file or more than the cap). Missing, it is a
    SubmissionError that names the file expected and what the folder holds instead."""
    problem = name_problem(name)
    if problem:
        raise SubmissionError(f"{problem}.")
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            raise SubmissionError(f"{folder}: is not a folder; --file names a file of a folder.")
    except OSError as exc:
        raise SubmissionError(f"{folder}: cannot be read ({exc.strerror}).") from None
    path = os.path.join(folder, name)
    if not os.path.lexists(path):
        raise SubmissionError(
            f"no file named {name} was handed in. This part is graded from a file named exactly "
            f"{name} (upper and lower case as written): rename yours and submit again. "
            f"{_held(folder)}"
        )
    return _read_file(path)


def _held(folder: str) -> str:
    """What a folder holds, in a sentence: its first names (made visible), sorted."""
    names: list[str] = []
    try:
        with os.scandir(folder) as entries:
            for i, entry in enumerate(entries):
                if i == _NAMED_SCANNED:
                    break
                names.append(visible_name(entry.name) + ("/" if entry.is_dir(follow_symlinks=False) else ""))
    except OSError:
        return ""
    if not names:
        return "The submission holds no file."
    names.sort()
    more = f" and {len(names) - NAMED_LISTED} more" if len(names) > NAMED_LISTED else ""
    return f"The submission holds: {', '.join(names[:NAMED_LISTED])}{more}."


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


# Windows has none of O_NOFOLLOW, O_NONBLOCK, O_CLOEXEC (a link is refused by name there,
# and it has no FIFO), and opens in text mode without O_BINARY.
_OPEN_FLAGS = os.O_RDONLY | sum(
    getattr(os, f, 0) for f in ("O_NOFOLLOW", "O_NONBLOCK", "O_CLOEXEC", "O_BINARY")
)


def _read_file(path: str) -> SubmissionFile:
    """Open without following a link or blocking on a FIFO; check what was opened."""
    try:
        if not hasattr(os, "O_NOFOLLOW") and os.path.islink(path):
            raise OSError(40, "a symbolic link")
        fd = os.open(path, _OPEN_FLAGS)
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


def submission_source(submission: SubmissionFile, display: tuple[str, ...] = ()) -> PythonSource:
    """The code of a submission, read by the format its name says (formats.py; a name of no
    format's suffix is read as Python). ``display``: the task's display libraries, whose
    values a notebook cell's last line does not show."""
    return source_of(submission.name, submission.data, visible_name(submission.name), display)
