"""The grade files a spreadsheet or an LMS imports, one set per task (so two tasks graded
into the same folder never overwrite each other):

- ``grades-<task>.csv``, detailed: ``student[, lms_id, name], score, max_score, status,
  diagnosis`` (the known mistakes diagnosed, by name, ``;`` between them), with a collection
  (collecting/collection_csv.py) ``collection, collection_note``, and the points of
  every graded check; a check that never ran (the file did not load, a
  prerequisite failed, the submission could not be graded at all) is an empty cell, not 0;
- ``canvas-<task>.csv``: Canvas's gradebook import (``Student, ID, SIS User ID, SIS Login ID,
  Section`` and one assignment column of total points, after a ``Points Possible`` row);
- ``moodle-<task>.csv``: Moodle's grade import (an identifier column, the name, one grade
  column; map ``lms_id`` to the user field the roster holds when importing).

The LMS files need a roster (roster.py). Every roster student is in them; one without a
submission, or whose submission the grader failed on (not a grade: the next batch grades it
again), has an empty score, so the LMS keeps it ungraded rather than 0. A submission id the
roster does not know cannot be matched in an LMS: it is only in the detailed file (with an
empty lms_id), and said on stderr.

Every text cell is student or roster text: formula-guarded (``for_csv``). ``excel`` writes a
UTF-8 BOM so Excel reads the file as UTF-8 (rows always end in CRLF, as RFC 4180 has them).
"""

from __future__ import annotations

import csv
import hashlib
import os
import re
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from grader.classroom.roster import Enrolled, Roster
from grader.records.result import SKIPPED, UNGRADABLE_CHECK, Result
from grader.student_text import for_csv

NO_SUBMISSION = "no submission"  # the status of a roster student with nothing graded
_TASK_FILE_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,99}")


def task_file(out_dir: str, prefix: str, task_id: str, extension: str) -> str:
    """``OUT/<prefix>-<task id>.<extension>``; a task id that is not a plain task id (an old
    or damaged gradebook) becomes a name built from its hash, never a path."""
    return f"{task_folder(out_dir, prefix, task_id)}.{extension}"


def task_folder(out_dir: str, prefix: str, task_id: str) -> str:
    """``OUT/<prefix>-<task id>``, named as ``task_file`` names files."""
    if not _TASK_FILE_ID.fullmatch(task_id):
        task_id = "task-" + hashlib.sha256(task_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return os.path.join(out_dir, f"{prefix}-{task_id}")


@dataclass
class Row:
    student: str  # the submission id (the roster's, for a student who has none)
    enrolled: Enrolled | None  # the roster's line, when there is a roster and it knows them
    report: Result | None  # None: nothing was submitted
    graded: bool = True  # False: the grader failed on it, so it holds no grade
    collection: str | None = None  # with a collection (collecting/collection_csv.py): its status for them
    note: str = ""  # ... and what was collected, or why nothing was
    status: str | None = None  # the status shown when there is no report (default: no submission)


@dataclass
class Rows:
    rows: list[Row]
    unknown: list[str]  # submission ids not in the roster
    missing: list[Enrolled]  # roster students without a submission
    not_graded: list[str]  # submissions the grader failed on (regraded by the next batch)
    not_collected: list[str] = field(default_factory=list)  # repositories not fetched
    ungraded_hand_ins: list[str] = field(default_factory=list)  # collected, no grade of that file


def match(
    reports: list[tuple[str, Result]], roster: Roster | None, failed: AbstractSet[str] = frozenset()
) -> Rows:
    """One row per roster student (in the roster's order), then one per unknown id;
    without a roster, one per report."""
    by_student = dict(reports)
    not_graded = [s for s, _ in reports if s in failed]
    if roster is None:
        return Rows([Row(s, None, r, s not in failed) for s, r in reports], [], [], not_graded)
    rows: list[Row] = []
    missing: list[Enrolled] = []
    for enrolled in roster.students:
        report = by_student.get(enrolled.submission_id)
        if report is None:
            missing.append(enrolled)
        rows.append(Row(enrolled.submission_id, enrolled, report, enrolled.submission_id not in failed))
    unknown = [s for s, _ in reports if s not in roster.by_id]
    rows += [Row(s, None, by_student[s], s not in failed) for s in unknown]
    return Rows(rows, unknown, missing, not_graded)


def check_columns(reports: list[tuple[str, Result]]) -> list[str]:
    """The graded checks (those worth points), in task order; not the synthetic line of a
    submission that could not be graded at all."""
    return list(
        dict.fromkeys(
            c.name for _, r in reports for c in r.checks if c.max_score and c.name != UNGRADABLE_CHECK
        )
    )


def max_score(scores: Iterable[float]) -> float | None:
    """The task's total, as most rows (their ``max_score``) have it; None without a row."""
    counted = list(scores)
    return max(counted, key=counted.count) if counted else None


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def _check_cells(report: Result | None, names: list[str]) -> list[str]:
    """The points of each check; empty where it never ran (skipped, or not in the report)."""
    ran = {c.name: c.score for c in (report.checks if report else []) if c.status != SKIPPED}
    return [_number(ran.get(name)) for name in names]


def _diagnosed(report: Result) -> str:
    """The names of the known mistakes diagnosed in a report (result.Diagnosis)."""
    return "; ".join(str(d.mistake) for d in report.diagnoses)


def _write(path: str, rows: list[list[str]], excel: bool) -> None:
    with open(path, "w", newline="", encoding="utf-8-sig" if excel else "utf-8") as f:
        csv.writer(f, lineterminator="\r\n").writerows(rows)


def write_detailed(
    path: str,
    matched: Rows,
    names: list[str],
    with_roster: bool,
    excel: bool = False,
    with_collection: bool = False,
) -> None:
    """With a collection, ``collection`` and ``collection_note`` follow ``diagnosis``: what
    was collected for the student (path, commit, date), or why nothing was."""
    header = (
        ["student"]
        + (["lms_id", "name"] if with_roster else [])
        + ["score", "max_score", "status", "diagnosis"]
        + (["collection", "collection_note"] if with_collection else [])
        + [for_csv(n) for n in names]
    )
    out = [header]
    for row in matched.rows:
        report = row.report
        people = []
        if with_roster:
            people = [for_csv(row.enrolled.lms_id), for_csv(row.enrolled.name)] if row.enrolled else ["", ""]
        collected = [row.collection or "", for_csv(row.note)] if with_collection else []
        if report is None:
            out.append(
                [for_csv(row.student)]
                + people
                + ["", "", row.status or NO_SUBMISSION, ""]
                + collected
                + [""] * len(names)
            )
            continue
        out.append(
            [for_csv(row.student)]
            + people
            + [
                _number(report.score),
                _number(report.max_score),
                for_csv(report.status),
                for_csv(_diagnosed(report)),
            ]
            + collected
            + _check_cells(report, names)
        )
    _write(path, out, excel)


def _total(row: Row) -> str:
    return _number(row.report.score) if row.report is not None and row.graded else ""


def write_canvas(
    path: str, matched: Rows, assignment: str, points: float | None, excel: bool = False
) -> None:
    out = [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", for_csv(assignment)],
        ["    Points Possible", "", "", "", "", _number(points)],
    ]  # as Canvas exports it
    for row in matched.rows:
        if row.enrolled is None:
            continue  # not in the roster: Canvas could not match it
        e = row.enrolled
        out.append(
            [
                for_csv(e.name),
                for_csv(e.lms_id),
                for_csv(e.extra.get("sis_user_id", "")),
                for_csv(e.extra.get("sis_login_id", "")),
                for_csv(e.extra.get("section", "")),
                _total(row),
            ]
        )
    _write(path, out, excel)


def write_moodle(
    path: str, matched: Rows, assignment: str, points: float | None = None, excel: bool = False
) -> None:
    """(``points``: Moodle's file holds none; its grade item has them.)"""
    out = [["lms_id", "name", for_csv(assignment)]]
    out += [
        [for_csv(row.enrolled.lms_id), for_csv(row.enrolled.name), _total(row)]
        for row in matched.rows
        if row.enrolled is not None
    ]
    _write(path, out, excel)
