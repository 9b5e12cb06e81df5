"""The grade files of a gradebook, written again: the detailed ones always, and each LMS
format asked for (export_formats.py: they need a roster), joined with a collection when
given."""

from __future__ import annotations

import os
from collections.abc import Collection as AbstractCollection
from dataclasses import dataclass

from grader.classroom import grade_files
from grader.classroom.collecting import Collection, join_collection
from grader.classroom.export_formats import DETAILED, LMS_FORMATS
from grader.classroom.gradebook import REGRADE, Gradebook
from grader.classroom.roster import Roster
from grader.records.result import Result
from grader.report.class_summary import write_jsonl
from grader.student_text import line


@dataclass
class Exported:
    task: str
    paths: list[str]
    matched: grade_files.Rows


def write_detailed(
    book: Gradebook,
    task_id: str,
    out_dir: str,
    roster: Roster | None,
    excel: bool,
    reports: list[tuple[str, Result]],
    collection: Collection | None = None,
) -> Exported:
    stored = book.stored(task_id)
    failed = {s for s, row in stored.items() if row.content_hash == REGRADE}
    matched = grade_files.match(reports, roster, failed)
    if collection is not None:
        matched = join_collection(
            matched, task_id, collection, {s: row.content_hash for s, row in stored.items()}
        )
    grades = grade_files.task_file(out_dir, DETAILED.prefix, task_id, "csv")
    grade_files.write_detailed(
        grades,
        matched,
        grade_files.check_columns(reports),
        roster is not None,
        excel,
        with_collection=collection is not None,
    )
    jsonl = grade_files.task_file(out_dir, "reports", task_id, "jsonl")
    write_jsonl(jsonl, reports)
    return Exported(task_id, [grades, jsonl], matched)


def export(
    out_dir: str,
    formats: AbstractCollection[str] = (),
    roster: Roster | None = None,
    task: str | None = None,
    assignment: str | None = None,
    excel: bool = False,
    collection: Collection | None = None,
) -> list[Exported]:
    """Write a task's grade files again from the gradebook (every task's, without ``task``):
    the detailed grades-<task>.csv and reports-<task>.jsonl always, and each LMS format
    named in ``formats`` (LMS_FORMATS; they need ``roster``). With a ``collection``
    (collecting/collection_csv.py, with a roster), its tasks too, and each row says what was collected for
    that student, or why nothing was."""
    book = Gradebook(os.path.join(out_dir, "gradebook.sqlite"))
    try:
        tasks = book.tasks()
        if collection is not None:
            tasks = sorted(set(tasks) | set(collection.tasks()))
        if task is not None:
            if task not in tasks:
                raise ExportError(
                    f"the gradebook holds no task {line(task)!r}; it holds: "
                    f"{', '.join(map(line, tasks)) or 'none'}"
                )
            tasks = [task]
        if assignment is not None and len(tasks) > 1:
            raise ExportError(
                "--assignment names one LMS column: give --task too (this "
                f"gradebook holds {len(tasks)} tasks)"
            )
        done = []
        for task_id in tasks:
            reports = book.reports(task_id)
            exported = write_detailed(book, task_id, out_dir, roster, excel, reports, collection)
            points = grade_files.max_score(r.max_score for _, r in reports)
            if points is None and collection is not None:  # (no one's hand-in was graded)
                points = grade_files.max_score(
                    r.max_score for r in collection.by_task.get(task_id, {}).values()
                )
            column = assignment or task_id
            for lms in LMS_FORMATS:
                if lms.name in formats:
                    path = grade_files.task_file(out_dir, lms.prefix, task_id, "csv")
                    getattr(grade_files, lms.writer)(path, exported.matched, column, points, excel)
                    exported.paths.append(path)
            done.append(exported)
    finally:
        book.close()
    return done


class ExportError(Exception):
    pass
