"""A task's hand-in in a student's repository, read from git objects (``grader collect``):
``solutions/<task id>`` with a hand-in suffix, or ``solutions/<task id>/`` holding one, chosen
by the rules ``grader ci`` uses. An entry that is not a regular blob is refused by its mode,
and a blob over the cap by its size, before a byte of it is read."""

from __future__ import annotations

import os
from dataclasses import dataclass

from grader.classroom.collecting import collection_csv as records
from grader.classroom.collecting.bare_repo import GitError, Repository, TreeEntry
from grader.student_text import student_id
from grader.submission.file import (
    MAX_SOURCE_BYTES,
    SubmissionError,
    choose_in_folder,
    hand_ins_for,
    refusal,
    source_stem,
    too_large,
)
from grader.submission.formats import format_of, named_each_way

SOLUTIONS = "solutions"
LINK_TARGET_BYTES = 1024  # a link's target is shown in the reason (read as the blob it is)
SHOWN_ENTRIES = 10  # of a solutions/ folder, in the reason a hand-in is missing


def shown(name: str) -> str:
    """An entry's name for the record: every control, invisible or non-ASCII character
    escaped, so a lookalike of a task id (``normalize\\u2010rows.py``) shows what differs."""
    return student_id(name).encode("ascii", "backslashreplace").decode("ascii")


@dataclass(frozen=True)
class HandInLookup:
    status: str
    path: str = ""  # shown
    data: bytes = b""
    suffix: str = ""
    reason: str = ""


def entry_described(entry: TreeEntry) -> str:
    """What an entry that is not a regular file is, in the words of a refusal."""
    if entry.mode == "120000":
        return "a symbolic link"
    if entry.type == "commit":
        return "a submodule (a commit of another repository)"
    if entry.type == "tree":
        return "a folder"
    return f"not a regular file (mode {entry.mode})"


def _refused(repo: Repository, entry: TreeEntry, path: str) -> HandInLookup:
    what = entry_described(entry)
    if entry.mode == "120000" and entry.size is not None and entry.size <= LINK_TARGET_BYTES:
        try:  # the target is the link's blob: data, shown, never followed
            target = os.fsdecode(repo.blob(entry, LINK_TARGET_BYTES))
            what += f" (to '{shown(target)}')"
        except GitError:
            pass
    return HandInLookup(records.REFUSED, path, reason=str(refusal(path, what)))


def _read(repo: Repository, entry: TreeEntry, path: str) -> HandInLookup:
    if not entry.is_file:
        return _refused(repo, entry, path)
    if entry.size is None or entry.size > MAX_SOURCE_BYTES:  # (its size, before any byte)
        return HandInLookup(records.REFUSED, path, reason=str(too_large(path)))
    data = repo.blob(entry, MAX_SOURCE_BYTES)
    suffix = format_of(entry.name).suffixes[0]  # (a bare name, a blob: read as Python)
    return HandInLookup(records.COLLECTED, path, data, suffix)


def find_hand_in(repo: Repository, listing: list[TreeEntry], task_id: str) -> HandInLookup:
    """A task's hand-in in the solutions/ folder's ``listing`` (bare_repo.TreeEntry), chosen as
    ``grader ci`` chooses it, read only if it is a regular blob within the cap."""
    names = set(hand_ins_for(task_id, [e.name for e in listing]))
    found = sorted((e for e in listing if e.name in names), key=lambda e: e.name)
    if not found:
        return HandInLookup(records.MISSING, reason=_missing(task_id, listing))
    if len(found) > 1:
        both = " and ".join(f"{SOLUTIONS}/{shown(e.name)}{'/' if e.type == 'tree' else ''}" for e in found)
        return HandInLookup(
            records.TWO_HAND_INS, reason=f"two hand-ins for {task_id}: {both}; keep one of them"
        )
    entry = found[0]
    path = f"{SOLUTIONS}/{shown(entry.name)}"
    if entry.type != "tree":
        return _read(repo, entry, path)
    inside = [e for e in repo.listing(entry.object) if source_stem(e.name) is not None and e.type != "tree"]
    try:
        chosen = choose_in_folder(f"{path}/", [e.name for e in inside])
    except SubmissionError as exc:
        return HandInLookup(records.REFUSED, f"{path}/", reason=shown(str(exc)))
    entries = [e for e in inside if e.name == chosen]
    file_path = f"{path}/{shown(chosen)}"
    if len(entries) > 1:
        return HandInLookup(
            records.REFUSED, file_path, reason=f"{file_path}: the folder holds two entries of that name"
        )
    return _read(repo, entries[0], file_path)


def _missing(task_id: str, listing: list[TreeEntry]) -> str:
    folder = f"a folder {SOLUTIONS}/{task_id}/ holding one"
    text = f"no hand-in for {task_id}: add {SOLUTIONS}/{named_each_way(task_id, (folder,))}"
    names = sorted(shown(e.name) + ("/" if e.type == "tree" else "") for e in listing)
    if names:
        more = f" and {len(names) - SHOWN_ENTRIES} more" if len(names) > SHOWN_ENTRIES else ""
        text += f"; {SOLUTIONS}/ holds {', '.join(names[:SHOWN_ENTRIES])}{more}"
    return text
