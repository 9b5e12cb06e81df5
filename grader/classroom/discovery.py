"""Finding the hand-ins in a class folder.

The folder holds one hand-in file per student (student id = the file's stem; the suffix in
any case) or one folder per student (id = the folder's name; the solution is its only
hand-in file, or its solution.py). Every other entry is named, with the reason it is not
graded. Each hand-in is read once, safely, and hashed: what is graded is what was hashed.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

from grader.records.wording import counted
from grader.student_text import for_markdown, line, student_id
from grader.student_text import name as visible_name
from grader.submission.file import SubmissionError, read_submission, source_stem
from grader.submission.formats import accepted_text, lookalike_reason


@dataclass(frozen=True)
class Submission:
    student: str
    path: str  # the hand-in file graded (or the folder, when none could be chosen)
    content: bytes
    content_hash: str
    problem: str | None = None  # why it cannot be graded at all (e.g. a folder of 3 files)


@dataclass(frozen=True)
class Skipped:
    """An entry of the class folder that is not graded, and why (said, never dropped)."""

    name: str  # as shown: visible and one-to-one (student_text.student_id)
    reason: str


@dataclass(frozen=True)
class Discovery:
    submissions: list[Submission]
    skipped: list[Skipped]


def _skip_reason(entry: os.DirEntry) -> str | None:
    """Why an entry of the class folder is no one's submission; None when it is one: a
    file of a hand-in format (formats.py; the suffix in any case: Python runs ``dave.PY``) or a folder, where
    a link or a special file is that student's hand-in, refused with its reason (a link
    named like a folder, ``frank -> /somewhere``, too)."""
    name = entry.name
    is_folder = entry.is_dir(follow_symlinks=False)
    if name.startswith("."):
        return f"a hidden {'folder' if is_folder else 'file'}"
    if source_stem(name) is not None:
        return None
    if is_folder and name == "__pycache__":
        return "Python's bytecode cache, not a submission"
    if is_folder or (entry.is_symlink() and "." not in name):
        return None
    return lookalike_reason(name) or f"not a {accepted_text()} file"


def discover(folder: str) -> Discovery:
    """One submission per hand-in file (formats.py) or folder of ``folder``, each read once, safely
    (see submission/file.py: a link, a FIFO, a device or an oversized file is recorded as
    that student's problem, never followed, opened or read); every other entry is named
    with the reason it was skipped."""
    if not os.path.isdir(folder):
        raise SubmissionError(f"{folder}: not a folder of submissions.")
    found: dict[str, Submission] = {}
    entry_names: dict[str, list[str]] = {}
    skipped = []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        name, path = entry.name, entry.path
        why = _skip_reason(entry)
        if why is not None:
            skipped.append(Skipped(student_id(name), why))
            continue
        stem = source_stem(name) or name  # (a folder per student: its name)
        # A student id is a file name, hostile text bound for the CSV, summary.md and the
        # terminal: shown visibly, and one-to-one, so no two students share a gradebook row.
        student = student_id(stem)
        entry_names.setdefault(student, []).append(name)
        if student in found:  # alice.py beside alice.ipynb or alice/: which is the hand-in?
            shown = [visible_name(n) for n in entry_names[student]]
            both = ", ".join(shown[:-1]) + " and " + shown[-1]
            found[student] = Submission(
                student,
                path,
                b"",
                "-",
                (f"two submissions for {student}: {both}; keep one of them and run the batch again."),
            )
            continue
        try:
            submission = read_submission(path)
        except SubmissionError as exc:
            found[student] = Submission(
                student, _handed_in(folder, path), b"", "-", _handed_in(folder, str(exc))
            )
            continue
        found[student] = Submission(
            student,
            _handed_in(folder, submission.path),
            submission.data,
            hashlib.sha256(submission.data).hexdigest(),
        )
    return Discovery(list(found.values()), skipped)


def _handed_in(folder: str, text: str) -> str:
    """A path in the class folder, or a message that opens with one, named from that folder
    (``bob/solution.py``: what the student handed in), never by the grading machine's path."""
    prefix = os.path.join(folder, "")
    return text[len(prefix) :] if text.startswith(prefix) else text


def skipped_markdown(skipped: list[Skipped]) -> str:
    """The summary's section on what in the folder was not graded (names escaped)."""
    if not skipped:
        return ""
    lines = ["", f"## Not graded: {_other_entries(skipped)} of the folder", ""]
    lines += [f"- skipped: {for_markdown(s.name)} ({for_markdown(s.reason)})" for s in skipped]
    return "\n".join(lines) + "\n"


def skipped_text(skipped: list[Skipped]) -> str:
    """The same section as plain text for a terminal (names on one line, controls shown)."""
    if not skipped:
        return ""
    lines = ["", f"Not graded: {_other_entries(skipped)} of the folder"]
    lines += [f"- skipped: {line(s.name, 400)} ({line(s.reason, 400)})" for s in skipped]
    return "\n".join(lines) + "\n"


def _other_entries(skipped: list[Skipped]) -> str:
    return counted(len(skipped), "other entry", "other entries")
