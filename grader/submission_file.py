"""Reading a submission: its bytes, read once, the only thing of it the grader ever uses.

Everything about a submission is the student's, the file itself included: it may be a
symbolic link to the reference or to a secret of the grading machine, a FIFO that blocks
whoever opens it, a device that never ends, or 100 MB. So a submission is opened without
following links (``O_NOFOLLOW``, and without blocking), must be a regular file by
``fstat`` of what was opened, and is read up to a size cap; inside a folder, links and
special files are refused by name before anything is opened. What comes out is bytes in
memory: the sandbox is sent those bytes, never a path to the original.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass

MAX_SOURCE_BYTES = 1 << 20
PREFERRED_NAMES = ("solution.py", "submission.py", "main.py")


class SubmissionError(Exception):
    """The submission cannot be graded at all (missing, a link, a special file, too large,
    an ambiguous folder); the message says which file and what to do."""


@dataclass(frozen=True)
class SubmissionFile:
    """A submission as read: where it was found (for messages) and its bytes."""

    path: str       # as given or found (shown to people, never opened again)
    data: bytes

    @property
    def name(self) -> str:
        return os.path.basename(self.path)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"),
                       (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a regular file"


def _refuse(path: str, what: str) -> SubmissionError:
    return SubmissionError(f"{path}: is {what}, not a regular file. Hand in the .py file "
                           "itself (a copy, not a link).")


def _too_large(path: str) -> SubmissionError:
    return SubmissionError(f"{path}: is larger than {MAX_SOURCE_BYTES // 1024} KiB; a solution "
                           "to this task is far smaller.")


def read_submission(path: str) -> SubmissionFile:
    """The submission at ``path``: a .py file, or a folder holding one (or a solution.py
    among several), as Gradescope and course repositories hand them over."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise SubmissionError(f"{path}: no such file. Give the path of a .py submission.") from None
    except OSError as exc:
        raise SubmissionError(f"{path}: cannot be read ({exc.strerror}).") from None
    if stat.S_ISDIR(info.st_mode):
        return _from_folder(path)
    return _read_file(path)


def _from_folder(folder: str) -> SubmissionFile:
    try:
        entries = {e.name: e for e in os.scandir(folder)
                   if e.name.endswith(".py") and not e.name.startswith(".")}
    except OSError as exc:
        raise SubmissionError(f"{folder}: cannot be read ({exc.strerror}).") from None
    names = sorted(entries)
    chosen: str | None
    if len(names) == 1:
        chosen = names[0]
    else:
        chosen = next((n for n in PREFERRED_NAMES if n in entries), None)
        if chosen is None:
            raise SubmissionError(
                f"{folder}: holds {len(names)} .py files ({', '.join(names[:5]) or 'none'}); "
                f"submit exactly one .py file, or name the solution {PREFERRED_NAMES[0]}.")
    entry = entries[chosen]
    path = os.path.join(folder, chosen)
    if entry.is_symlink() or not entry.is_file(follow_symlinks=False):
        raise _refuse(path, _kind(entry.stat(follow_symlinks=False).st_mode))
    return _read_file(path)


def _read_file(path: str) -> SubmissionFile:
    """Open without following a link or blocking on a FIFO; check what was opened."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if os.path.islink(path):
            raise _refuse(path, "a symbolic link") from None
        raise SubmissionError(f"{path}: cannot be read ({exc.strerror}).") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _refuse(path, _kind(info.st_mode))
        if info.st_size > MAX_SOURCE_BYTES:
            raise _too_large(path)
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
        raise _too_large(path)
    return SubmissionFile(path, data)


@dataclass(frozen=True)
class PythonSource:
    """A submission's text as Python reads it, or why Python would refuse it."""

    text: str | None
    problem: str = ""


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
            return PythonSource(None, "it is not valid UTF-8 and declares no other encoding, so "
                                      "Python refuses it; save the file as UTF-8")
        return PythonSource(None, f"Python refuses its encoding declaration ({reason}); save "
                                  "the file as UTF-8 and remove the coding line")
    if not _reads_ascii_as_ascii(encoding):
        return PythonSource(None, f"it declares the encoding '{encoding}', which hides what the "
                                  "code says; save the file as UTF-8 and remove the coding line")
    try:
        return PythonSource(data.decode(encoding))
    except UnicodeDecodeError as exc:
        return PythonSource(None, f"it is not valid {encoding} (byte {exc.start}: {exc.reason}); "
                                  "save the file as UTF-8")
    except Exception as exc:   # whatever a codec raises: the file is refused, never the grader
        return PythonSource(None, f"it cannot be read as {encoding} ({type(exc).__name__}); "
                                  "save the file as UTF-8")


def _reads_ascii_as_ascii(encoding: str) -> bool:
    ascii_bytes = bytes(range(128))
    try:
        return ascii_bytes.decode(encoding) == ascii_bytes.decode("ascii")
    except Exception:   # LookupError, UnicodeError ('undefined', 'punycode'), codecs' own
        return False
