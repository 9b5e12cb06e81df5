"""``grader batch``: grade a class, in parallel, into a gradebook that survives any crash.

The hand-ins are found by discovery.py, graded where executors.py sends them, and stored one
transaction each as they finish; a re-run skips submissions whose content and task are
unchanged. Then the detailed grade files (export.py), the class summary and the pages.
"""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass, field
from typing import TextIO

from grader.classroom import grade_files, page_files
from grader.classroom.discovery import Skipped, Submission, discover, skipped_markdown, skipped_text
from grader.classroom.executors import POOL_GENERATIONS, DaskExecutor, LocalExecutor, TaskFiles, task_files
from grader.classroom.export import write_detailed
from grader.classroom.gradebook import REGRADE, Gradebook
from grader.classroom.progress import Progress
from grader.grading import GradeOptions, prepare, tier_for
from grader.records.result import Result, ungradable
from grader.records.wording import counted
from grader.report.class_summary import render_markdown, render_text, summarize
from grader.sandbox import downgrade_note, refuse_open_paths, warm_supported
from grader.sandbox import tier as sandbox_tier
from grader.student_text import clean_report, line, visible
from grader.task.spec import Task


@dataclass
class BatchOutcome:
    graded: int
    skipped: int
    summary_markdown: str  # summary-<task>.md
    summary_text: str  # the same for a terminal: plain text, no Markdown escapes
    grader_failed: list[str] = field(default_factory=list)  # stored as errors, regraded next run
    written: list[str] = field(default_factory=list)  # the files written in OUT
    skipped_entries: list[Skipped] = field(default_factory=list)  # in the folder, no one's submission


def _choose_sandbox(options: GradeOptions, folder: str, out_dir: str, stream: TextIO) -> None:
    """Choose the tier before anything is graded (a class is others' work: never the rlimits
    tier) and say how submissions will be isolated, what is weaker than bubblewrap, and
    whether workers are warm (a batch without warm workers is several times slower; the
    instructor should know why)."""
    tier = tier_for(options)  # (a class: others' work, never a kit)
    if sandbox_tier(
        tier
    ).file_permissions_are_walls:  # classmates' files and the results must be closed to a worker
        os.makedirs(out_dir, mode=0o700, exist_ok=True)  # (a new one is made closed)
        refuse_open_paths([folder, out_dir], [out_dir])
    if downgrade_note(tier):
        print(f"note: {downgrade_note(tier)}", file=stream)
    if not options.warm_workers:
        print(f"sandbox: {tier}, a fresh worker per submission (--no-warm)", file=stream)
    elif warm_supported(tier):
        print(f"sandbox: {tier}, each worker forked from a warm server and confined on its own", file=stream)
    else:
        print(
            f"sandbox: {tier}, a fresh worker per submission (warm workers, several times "
            "faster, need Landlock ABI 6, a cgroup the grader may create and user namespaces)",
            file=stream,
        )


def _cannot_grade(task: Task, submission: Submission, reason: str) -> Result:
    return ungradable(task.id, task.version, task.max_score, submission.path, reason)


def _cleaned(report: Result) -> Result:
    """The report with every string valid, visible and capped (student_text.clean_report)."""
    return Result.from_dict(clean_report(report.to_dict()))


def run_batch(
    task: Task,
    folder: str,
    out_dir: str,
    jobs: int,
    force: bool,
    dask_address: str | None,
    options: GradeOptions,
    stream: TextIO = sys.stderr,
) -> BatchOutcome:
    if not dask_address:  # (Dask workers decide for their own machines)
        _choose_sandbox(options, folder, out_dir, stream)
    os.makedirs(out_dir, exist_ok=True)
    book = Gradebook(os.path.join(out_dir, "gradebook.sqlite"))
    try:
        discovery = discover(folder)
        submissions = discovery.submissions
        for entry in discovery.skipped:  # never dropped without a word
            print(visible(f"skipped: {entry.name} ({entry.reason})"), file=stream)
        stored = book.stored(task.id)
        page_files.tidy(out_dir, task.id)
        # A student without a page is graded again: pictures are not kept in the gradebook.
        todo = [
            s
            for s in submissions
            if force
            or s.student not in stored
            or stored[s.student].content_hash != s.content_hash
            or stored[s.student].task_digest != task.digest
            or not os.path.exists(page_files.student_page_path(out_dir, task.id, s.student))
        ]
        print(
            f"{task.id}: {counted(len(submissions), 'submission')}, {len(todo)} to grade, "
            f"{len(submissions) - len(todo)} unchanged since their last grading",
            file=stream,
        )
        progress = Progress(len(todo), stream)
        failed: list[str] = []
        if todo:
            failed = _grade_all(task, todo, book, jobs, dask_address, options, progress, stream, out_dir)
        progress.finish()
        # The gradebook follows the folder: a student whose hand-in has gone from it is
        # removed (row and page), so that no file of OUT (nor a later grader export) still
        # grades them; the file put back is graded again.
        gone = book.forget_all_but(task.id, {s.student for s in submissions})
        for student in gone:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(page_files.student_page_path(out_dir, task.id, student))
        if gone:
            print(
                visible(
                    f"{task.id}: {counted(len(gone), 'student')} removed from the gradebook, their "
                    f"file no longer being in {folder}: "
                    f"{', '.join(gone[:10])}{f' and {len(gone) - 10} more' if len(gone) > 10 else ''}"
                ),
                file=stream,
            )
        reports = book.reports(task.id)  # read once: the summary, the grade files and the page share them
        written = write_detailed(book, task.id, out_dir, None, excel=False, reports=reports)
        class_summary = summarize(task.id, reports, mismatch_words(task))
        text = render_markdown(class_summary) + skipped_markdown(discovery.skipped)
        summary = grade_files.task_file(out_dir, "summary", task.id, "md")
        with open(summary, "w", encoding="utf-8") as f:
            f.write(text)
        pages = page_files.write_class_page(class_summary, reports, out_dir, task.id)
        return BatchOutcome(
            len(todo),
            len(submissions) - len(todo),
            text,
            render_text(class_summary) + skipped_text(discovery.skipped),
            failed,
            written.paths + [summary, pages],
            discovery.skipped,
        )
    finally:
        book.close()


def _grader_failed(
    book: Gradebook, task: Task, s: Submission, why: str, progress: Progress, out_dir: str
) -> None:
    """A row for a submission the grader could not grade (its own failure, not the
    student's): every point lost for now, the reason said, and regraded on the next run."""
    report = _cannot_grade(
        task,
        s,
        f"the grader failed on this submission ({why}); it is not "
        "your grade: the next run of the batch grades it again.",
    )
    page_files.write_student_page(out_dir, task.id, s.student, report)
    book.record(task.id, s.student, REGRADE, task.version, task.digest, report)
    progress.update(report)


def _grade_all(
    task: Task,
    todo: list[Submission],
    book: Gradebook,
    jobs: int,
    dask_address: str | None,
    options: GradeOptions,
    progress: Progress,
    stream: TextIO,
    out_dir: str,
) -> list[str]:
    """Grades ``todo`` into ``book``; every submission gets a row. Returns the students
    the grader failed on (their rows are errors that the next run regrades)."""
    # Cases, expected outputs, reference times and mistakes' profiles: built once here and
    # handed to the pool's processes as they start.
    prepared = prepare(task, options.use_cache)
    task_ref: str | TaskFiles = task_files(task) if dask_address else task.folder
    pending: dict[str, Submission] = {}
    failed: list[str] = []
    for s in todo:
        if s.problem:
            _store(book, task, s, _cannot_grade(task, s, s.problem), progress, out_dir)
        else:
            pending[s.student] = s
    for _ in range(POOL_GENERATIONS):
        if not pending:
            return failed
        executor: DaskExecutor | LocalExecutor = (
            DaskExecutor(dask_address) if dask_address else LocalExecutor(jobs, prepared)
        )
        try:
            futures = {
                executor.submit(task_ref, os.path.basename(s.path), s.content, options): s
                for s in pending.values()
            }
            for future in executor.as_completed(futures):
                s = futures[future]
                try:
                    row = future.result()  # (plain data across the process: any grader's reads)
                except Exception as exc:
                    if executor.broken(exc):
                        break  # rebuild the pool; what is still pending is submitted again
                    # The grader's own failure is not a grade: stored as an error row that
                    # the next run grades again, and the batch exits non-zero.
                    why = line(f"{type(exc).__name__}: {exc}", 300)
                    print(f"{s.student}: not graded ({why}); run the batch again to retry it", file=stream)
                    _grader_failed(book, task, s, why, progress, out_dir)
                    failed.append(s.student)
                    pending.pop(s.student)
                    del futures[future]
                    continue
                _store(book, task, s, Result.from_dict({**row, "submission": s.path}), progress, out_dir)
                pending.pop(s.student)
                del futures[future]  # its report is stored: a class's reports never pile up here
        finally:
            executor.close()
    if pending:
        print(
            f"not graded, because the grading processes kept dying: {', '.join(sorted(pending))}. "
            "Run the batch again to retry them.",
            file=stream,
        )
        for student in sorted(pending):
            _grader_failed(
                book, task, pending[student], "the grading processes kept dying", progress, out_dir
            )
            failed.append(student)
    return failed


def _store(
    book: Gradebook, task: Task, s: Submission, report: Result, progress: Progress, out_dir: str
) -> None:
    report = _cleaned(report)  # the submission's path and any message that quotes it
    # The page first, then the row: a batch killed between them grades the student again
    # (no row), so a stored row always has its page. Pictures go only to the page: kept in
    # the gradebook they would make it ~100 kB a student for no other reader.
    page_files.write_student_page(out_dir, task.id, s.student, report)
    book.record(
        task.id, s.student, s.content_hash, task.version, task.digest, page_files.without_pictures(report)
    )
    progress.update(report)


def mismatch_words(task: Task) -> dict[str, str]:
    """For each check of a task (spec.Task), what a mismatch means (its kind says)."""
    return {check.name: check.kind.describe_mismatch(check.options) for check in task.checks}
