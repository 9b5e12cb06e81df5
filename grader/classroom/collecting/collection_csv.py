"""The record of a final collection (``grader collect``): for every roster student and
every task, what was collected from their repository, or why nothing was.

``OUT/collection.csv`` has one row per (student, task), in the roster's order:

    submission_id, task, status, reason, commit, committed, path, file, sha256, max_score, note

``status`` is one of ``STATUSES``: ``collected`` (``path`` in the repository at ``commit``,
written to ``OUT/<file>``, its SHA-256 ``sha256``), ``missing`` (no hand-in, or no commit
before the deadline), ``two-hand-ins``, ``refused`` (a link, a submodule, a special entry,
too large, an ambiguous folder) or ``unreachable`` (the repository could not be fetched:
git's reason, secrets redacted). ``note`` says what the history shows (commits after the
deadline, dates that go backwards). Every text cell is formula-safe (``for_csv``).

``grader export --collection`` joins it to the gradebook (``join``), so the grade files have
a row for every roster student with the reason, and a grade only for the file that was
collected: a gradebook row of another file (an older collection's) is not used.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, fields

from grader.classroom.grade_files import NO_SUBMISSION, Row, Rows
from grader.disk import create_private
from grader.records.result import ungradable
from grader.records.wording import counted
from grader.student_text import for_csv
from grader.student_text import line as visible_line

COLLECTED, MISSING, TWO_HAND_INS, REFUSED, UNREACHABLE = (
    "collected",
    "missing",
    "two-hand-ins",
    "refused",
    "unreachable",
)
STATUSES = (COLLECTED, MISSING, TWO_HAND_INS, REFUSED, UNREACHABLE)
# What the student handed in and cannot be graded: 0 points, as a batch gives such a file.
SCORED_ZERO = (TWO_HAND_INS, REFUSED)
FILE_NAME = "collection.csv"
MAX_BYTES = 64 << 20
_HEX = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Record:
    submission_id: str
    task: str
    status: str
    reason: str = ""  # why nothing was collected (empty when collected)
    commit: str = ""  # the commit graded (empty when the repository was not fetched)
    committed: str = ""  # its committer date, as the student's git wrote it (UTC, ISO 8601)
    path: str = ""  # the hand-in in the repository (shown safely)
    file: str = ""  # where it was written, relative to OUT
    sha256: str = ""
    max_score: float = 0.0
    note: str = ""  # about the history: commits not graded, dates that go backwards

    def summary(self) -> str:
        """One line for people: where the graded file came from, or why there is none."""
        if self.status == COLLECTED:
            text = f"{self.path} at commit {self.commit[:12]} ({self.committed})"
        else:
            text = self.reason
        return f"{text}; {self.note}" if self.note else text


COLUMNS = tuple(f.name for f in fields(Record))


class CollectionError(Exception):
    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


def write_collection(path: str, records: list[Record]) -> None:
    """The record, as a new file the instructor alone reads (0600 whatever the umask: it
    names every student and their files; never through a link, never over another's)."""
    with create_private(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f, lineterminator="\r\n")
        out.writerow(COLUMNS)
        for r in records:
            out.writerow(
                [
                    for_csv(r.submission_id),
                    r.task,
                    r.status,
                    for_csv(r.reason),
                    r.commit,
                    r.committed,
                    for_csv(r.path),
                    r.file,
                    r.sha256,
                    f"{r.max_score:g}",
                    for_csv(r.note),
                ]
            )


@dataclass
class Collection:
    records: list[Record]

    def __post_init__(self) -> None:
        self.by_task: dict[str, dict[str, Record]] = {}
        for r in self.records:
            self.by_task.setdefault(r.task, {})[r.submission_id] = r

    def tasks(self) -> list[str]:
        return sorted(self.by_task)


def read_collection(path: str) -> Collection:
    """A collection.csv as ``grader collect`` writes it; every problem named with its line."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise CollectionError(
            [
                f"{path}: cannot be read ({exc.strerror or exc}); give the "
                f"{FILE_NAME} that grader collect wrote"
            ]
        ) from None
    if len(data) > MAX_BYTES:
        raise CollectionError([f"{path}: larger than {MAX_BYTES >> 20} MiB; is it {FILE_NAME}?"])
    try:
        rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))
    except (UnicodeDecodeError, csv.Error) as exc:
        raise CollectionError([f"{path}: not a {FILE_NAME} of grader collect ({exc})"]) from None
    if not rows or tuple(rows[0]) != COLUMNS:
        raise CollectionError(
            [f"{path}:1: not a {FILE_NAME} of grader collect (its header is {','.join(COLUMNS)})"]
        )
    records, problems, seen = [], [], set()
    for number, row in enumerate(rows[1:], start=2):
        if not any(row):
            continue
        if len(row) != len(COLUMNS):
            problems.append(f"{path}:{number}: {counted(len(row), 'field')}, the header has {len(COLUMNS)}")
            continue
        cells = dict(zip(COLUMNS, row))
        sid = cells["submission_id"]
        if sid.startswith("'") and for_csv(sid[1:]) == sid:
            sid = sid[1:]  # (the formula guard write() added)
        where = f"{path}:{number}"
        if cells["status"] not in STATUSES:
            problems.append(
                f"{where}: status {visible_line(cells['status'])!r} (known: {', '.join(STATUSES)})"
            )
            continue
        if cells["status"] == COLLECTED and not (
            _SHA256.fullmatch(cells["sha256"]) and _HEX.fullmatch(cells["commit"])
        ):
            problems.append(f"{where}: a collected hand-in needs its commit and sha256")
            continue
        try:
            points = float(cells["max_score"])
        except ValueError:
            problems.append(f"{where}: max_score {visible_line(cells['max_score'])!r} is no number")
            continue
        if (sid, cells["task"]) in seen:
            problems.append(f"{where}: {visible_line(sid)!r} and task {visible_line(cells['task'])!r} again")
            continue
        seen.add((sid, cells["task"]))
        records.append(
            Record(
                sid,
                cells["task"],
                cells["status"],
                cells["reason"],
                cells["commit"],
                cells["committed"],
                cells["path"],
                cells["file"],
                cells["sha256"],
                points,
                cells["note"],
            )
        )
    if problems:
        raise CollectionError(problems)
    return Collection(records)


# --------------------------------------------------------------------------- the join

NOT_COLLECTED = "not collected"  # the detailed status of a repository that was not fetched
NOT_GRADED = "not graded"  # collected, and no gradebook row of that very file


def join_collection(rows: Rows, task: str, collection: Collection, hashes: dict[str, str]) -> Rows:
    """The rows of a task's grade files (grade_files.Rows) with the collection's record of
    each student: its status and reason in the row, a grade only where the gradebook graded
    the very file collected (``hashes``: student -> the content hash of their row), 0 points
    for a refused hand-in, an empty score for a missing one or an unreachable repository."""
    records = collection.by_task.get(task, {})
    joined: list[Row] = []
    for row in rows.rows:
        record = records.get(row.student)
        if record is None or row.enrolled is None:
            joined.append(row)
            continue
        kept = (
            row.report
            if record.status == COLLECTED
            and row.report is not None
            and hashes.get(row.student) == record.sha256
            else None
        )
        note = record.summary()
        if row.report is not None and kept is None:
            # (the gradebook still holds an older collection's grade: never exported as this one's)
            note += (
                " (the gradebook graded another file: run grader batch on it again)"
                if record.status == COLLECTED
                else " (an older grade in the gradebook is not used)"
            )
        elif record.status == COLLECTED and kept is None:
            note += " (not in the gradebook: run grader batch on it)"
        if record.status == COLLECTED:
            joined.append(
                Row(
                    row.student,
                    row.enrolled,
                    kept,
                    row.graded and kept is not None,
                    collection=record.status,
                    note=note,
                    status=None if kept is not None else NOT_GRADED,
                )
            )
        elif record.status in SCORED_ZERO:
            report = ungradable(task, "", record.max_score, record.path or "-", record.reason)
            joined.append(Row(row.student, row.enrolled, report, True, collection=record.status, note=note))
        else:
            joined.append(
                Row(
                    row.student,
                    row.enrolled,
                    None,
                    False,
                    collection=record.status,
                    note=note,
                    status=NO_SUBMISSION if record.status == MISSING else NOT_COLLECTED,
                )
            )
    missing = [
        r.enrolled
        for r in joined
        if r.enrolled is not None and r.report is None and r.collection in (None, MISSING)
    ]
    return Rows(
        joined,
        rows.unknown,
        missing,
        rows.not_graded,
        not_collected=[r.student for r in joined if r.collection == UNREACHABLE],
        ungraded_hand_ins=[r.student for r in joined if r.status == NOT_GRADED],
    )
