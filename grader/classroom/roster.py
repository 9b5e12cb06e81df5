"""A class roster: which LMS student each submission id belongs to.

``roster.csv`` has a header and the columns ``submission_id,lms_id,name`` (the student ids
of a batch: a file's stem or a folder's name, as grades-<task>.csv shows them), optionally
``sis_user_id``, ``sis_login_id`` and ``section`` (copied into a Canvas import) and ``repo``
(the student's repository, for ``grader collect``; never exported). It is read
as UTF-8, with or without a BOM (as Excel saves it). Every problem is reported with its line,
all at once; a roster with problems is not used at all.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field

from grader.records.wording import counted
from grader.student_text import line as visible_line

REQUIRED = ("submission_id", "lms_id", "name")
OPTIONAL = ("sis_user_id", "sis_login_id", "section", "repo")
MAX_BYTES = 16 << 20


class RosterError(Exception):
    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Enrolled:
    submission_id: str
    lms_id: str
    name: str
    extra: dict = field(default_factory=dict)  # the optional columns present
    line: int = 0  # the roster's line (for messages)


@dataclass
class Roster:
    students: list[Enrolled]  # in the file's order

    def __post_init__(self) -> None:
        self.by_id = {s.submission_id: s for s in self.students}


def load_roster(path: str) -> Roster:
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise RosterError([f"{path}: cannot be read ({exc.strerror or exc})"]) from None
    if len(data) > MAX_BYTES:
        raise RosterError([f"{path}: larger than {MAX_BYTES >> 20} MiB; is it the roster?"])
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line_no = data[: exc.start].count(b"\n") + 1
        raise RosterError([f"{path}:{line_no}: not UTF-8 text; save the roster as CSV UTF-8"]) from None
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise RosterError([f"{path}: not a CSV file ({exc})"]) from None
    if not rows:
        raise RosterError([f"{path}: empty; it needs the header {','.join(REQUIRED)} and a row per student"])
    header = [h.strip() for h in rows[0]]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise RosterError(
            [
                f"{path}:1: the header must name the columns {','.join(REQUIRED)} "
                f"(missing: {', '.join(missing)}; found: {visible_line(','.join(header))})"
            ]
        )
    unknown = [h for h in header if h not in REQUIRED + OPTIONAL]
    problems = [
        f"{path}:1: unknown column {visible_line(h)!r} (known: {', '.join(REQUIRED + OPTIONAL)})"
        for h in unknown
    ]
    students: list[Enrolled] = []
    seen_ids: dict[str, int] = {}
    seen_lms: dict[str, int] = {}
    for number, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            problems.append(f"{path}:{number}: {counted(len(row), 'field')}, the header has {len(header)}")
            continue
        cells = {h: cell.strip() for h, cell in zip(header, row)}
        for column in ("submission_id", "lms_id"):
            if not cells[column]:
                problems.append(f"{path}:{number}: empty {column}")
        sid, lms = cells["submission_id"], cells["lms_id"]
        if sid and sid in seen_ids:
            problems.append(
                f"{path}:{number}: submission_id {visible_line(sid)!r} again (first on line {seen_ids[sid]})"
            )
        if lms and lms in seen_lms:
            problems.append(
                f"{path}:{number}: lms_id {visible_line(lms)!r} again (first on line {seen_lms[lms]})"
            )
        seen_ids.setdefault(sid, number)
        seen_lms.setdefault(lms, number)
        students.append(
            Enrolled(sid, lms, cells["name"], {c: cells[c] for c in OPTIONAL if c in cells}, number)
        )
    if not students and not problems:
        problems.append(f"{path}: holds a header but no student")
    if problems:
        raise RosterError(problems)
    return Roster(students)
