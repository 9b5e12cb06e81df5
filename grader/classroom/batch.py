"""``grader batch``: grade a class, in parallel, into a gradebook that survives any crash.

SUBMISSIONS_DIR holds one .py or .ipynb file per student (student id = the file's stem; the
suffix in any case) or one folder per student (id = the folder's name; the solution is its
only .py or .ipynb file, or its solution.py). Every other entry is named, with the reason it
is not graded, on stderr and in the summary.
Each job carries the submission's bytes, so what is graded is exactly what was hashed, and
a remote Dask worker needs no shared filesystem. Results are stored one transaction each
as they finish; a re-run skips submissions whose content and task are unchanged.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import multiprocessing
import os
import sys
import tempfile
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from grader.classroom import grade_files, page_files
from grader.classroom.gradebook import Gradebook
from grader.classroom.progress import Progress
from grader.records.result import ungradable
from grader.report.class_summary import mismatch_words, render_markdown, summarize, write_jsonl
from grader.student_text import clean_report, for_markdown, line, student_id, visible
from grader.student_text import name as visible_name
from grader.submission.file import SubmissionError, SubmissionFile, read_submission, source_stem

if TYPE_CHECKING:  # grading (numpy, the sandbox) is imported where a submission is graded:
    from grader.grading.grade import Options  # `grader export` needs none of it (~0.3 s of start-up)
    from grader.task.spec import Task


@dataclass(frozen=True)
class Submission:
    student: str
    path: str  # the .py or .ipynb file graded (or the folder, when none could be chosen)
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
    .py or .ipynb file (the suffix in any case: Python runs ``dave.PY``) or a folder, where
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
    if name.lower().endswith((".pyc", ".pyo")):
        return "compiled Python, not source: hand in the .py file"
    return "not a .py or .ipynb file"


def discover(folder: str) -> Discovery:
    """One submission per .py or .ipynb file or folder of ``folder``, each read once, safely
    (see submission_file.py: a link, a FIFO, a device or an oversized file is recorded as
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
    lines = [
        "",
        f"## Not graded: {len(skipped)} other entr{'y' if len(skipped) == 1 else 'ies'} of the folder",
        "",
    ]
    lines += [f"- skipped: {for_markdown(s.name)} ({for_markdown(s.reason)})" for s in skipped]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- jobs

_task_folders: dict[str, str] = {}  # task digest -> where a remote worker unpacked it


@dataclass(frozen=True)
class TaskFiles:
    """A task's files, for a worker on another machine, with their digest (computed once,
    by the batch: a worker never hashes the task's megabytes per submission)."""

    digest: str
    files: dict[str, bytes]


def task_files(task: Task) -> TaskFiles:
    files = {}
    for root, dirs, names in os.walk(task.folder):
        dirs[:] = [d for d in dirs if d != "__pycache__" and not d.startswith(".")]
        for name in names:
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                files[os.path.relpath(path, task.folder)] = f.read()
    digest = hashlib.sha256()
    for relative in sorted(files):
        digest.update(f"{relative}\0{len(files[relative])}\0".encode())
        digest.update(files[relative])
    return TaskFiles(digest.hexdigest()[:16], files)


def grade_bytes(task_ref, name: str, content: bytes, options: Options) -> dict:
    """Grade one submission from its bytes; ``task_ref`` is the task folder, or its files
    (for a worker on another machine). Runs in a pool process or a Dask worker."""
    if isinstance(task_ref, TaskFiles):
        if task_ref.digest not in _task_folders:
            folder = tempfile.mkdtemp(prefix=f"grader-task-{task_ref.digest}-")
            for relative, data in task_ref.files.items():
                os.makedirs(os.path.dirname(os.path.join(folder, relative)), exist_ok=True)
                with open(os.path.join(folder, relative), "wb") as f:
                    f.write(data)
            _task_folders[task_ref.digest] = folder
        task_ref = _task_folders[task_ref.digest]
    from grader.grading.grade import grade
    from grader.grading.task_yaml import load_task

    task = load_task(task_ref)
    return grade(task, SubmissionFile(name, content), options).to_dict()


def _start_pool_process() -> None:
    """Pool processes (and through them their sandboxes) end when the batch is killed; on a
    normal end they close their warm workers (multiprocessing skips atexit there)."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    from multiprocessing.util import Finalize

    from grader.sandbox import close_warm_workers

    Finalize(None, close_warm_workers, exitpriority=10)


class LocalExecutor:
    def __init__(self, jobs: int):
        context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
        self.pool = concurrent.futures.ProcessPoolExecutor(
            jobs, mp_context=context, initializer=_start_pool_process
        )

    def submit(self, *args):
        return self.pool.submit(grade_bytes, *args)

    def as_completed(self, futures):
        return concurrent.futures.as_completed(futures)

    @staticmethod
    def broken(exc: Exception) -> bool:
        return isinstance(exc, concurrent.futures.process.BrokenProcessPool)

    def close(self):
        self.pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor:
    """Sends jobs to an existing Dask cluster; each Dask worker grades with the same sandbox."""

    def __init__(self, address: str):
        try:
            from distributed import Client
        except ImportError:
            raise SubmissionError("--dask needs the dask extra: pip install 'grader[dask]'") from None
        self.client = Client(address, timeout="20s")
        self.shipped: dict[str, object] = {}

    def submit(self, task_ref, *args):
        # The task's files (18 MB for positional-encoding) go to each worker once, not with
        # every job: sent per job, they halved the class's throughput.
        if isinstance(task_ref, TaskFiles):
            if task_ref.digest not in self.shipped:
                self.shipped[task_ref.digest] = self.client.scatter(task_ref, broadcast=True)
            task_ref = self.shipped[task_ref.digest]
        return self.client.submit(grade_bytes, task_ref, *args, pure=False)

    def as_completed(self, futures):
        from distributed import as_completed

        return as_completed(list(futures))

    @staticmethod
    def broken(exc: Exception) -> bool:
        return type(exc).__name__ == "KilledWorker"  # Dask gave up on workers that kept dying

    def close(self):
        self.client.close()


# --------------------------------------------------------------------------- the batch


@dataclass
class BatchOutcome:
    graded: int
    skipped: int
    summary_markdown: str
    grader_failed: list[str] = field(default_factory=list)  # stored as errors, regraded next run
    written: list[str] = field(default_factory=list)  # the files written in OUT
    skipped_entries: list[Skipped] = field(default_factory=list)  # in the folder, no one's submission


def _choose_sandbox(options: Options, folder: str, out_dir: str, stream) -> None:
    """Choose the tier before anything is graded (a class is others' work: never the rlimits
    tier) and say how submissions will be isolated, what is weaker than bubblewrap, and
    whether workers are warm (a batch without warm workers is several times slower; the
    instructor should know why)."""
    from grader.sandbox import choose_tier, downgrade_note, refuse_open_paths, warm_supported
    from grader.sandbox import tier as sandbox_tier

    tier = choose_tier(options.isolation, options.others_work, options.shared_state)
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


def _cannot_grade(task: Task, submission: Submission, reason: str) -> dict:
    return ungradable(task.id, task.version, task.max_score, submission.path, reason).to_dict()


def run_batch(
    task: Task,
    folder: str,
    out_dir: str,
    jobs: int,
    force: bool,
    dask_address: str | None,
    options: Options,
    stream=sys.stderr,
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
            or not os.path.exists(page_files.student_page(out_dir, task.id, s.student))
        ]
        print(
            f"{task.id}: {len(submissions)} submissions, {len(todo)} to grade, "
            f"{len(submissions) - len(todo)} unchanged since their last grading",
            file=stream,
        )
        progress = Progress(len(todo), stream)
        failed: list[str] = []
        if todo:
            failed = _grade_all(task, todo, book, jobs, dask_address, options, progress, stream, out_dir)
        progress.finish()
        reports = book.reports(task.id)  # read once: the summary and the grade files share them
        written = _write_detailed(book, task.id, out_dir, None, excel=False, reports=reports)
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
            failed,
            written.paths + [summary, pages],
            discovery.skipped,
        )
    finally:
        book.close()


POOL_GENERATIONS = 3  # a pool whose processes were killed is rebuilt this many times


# The content hash stored with the error row of a submission the grader itself failed on:
# it matches no file, so the next run grades that submission again.
REGRADE = "grader-failed"


def _grader_failed(book, task, s, why: str, progress, out_dir: str) -> None:
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


def _grade_all(task, todo, book, jobs, dask_address, options, progress, stream, out_dir: str) -> list[str]:
    """Grades ``todo`` into ``book``; every submission gets a row. Returns the students
    the grader failed on (their rows are errors that the next run regrades)."""
    # Cases and expected outputs are built once here; forked pool processes inherit them.
    from grader.grading.grade import prepare

    prepare(task, options)
    task_ref = task_files(task) if dask_address else task.folder
    pending: dict = {}
    failed: list = []
    for s in todo:
        if s.problem:
            _store(book, task, s, _cannot_grade(task, s, s.problem), progress, out_dir)
        else:
            pending[s.student] = s
    for _ in range(POOL_GENERATIONS):
        if not pending:
            return failed
        executor = DaskExecutor(dask_address) if dask_address else LocalExecutor(jobs)
        try:
            futures = {
                executor.submit(task_ref, os.path.basename(s.path), s.content, options): s
                for s in pending.values()
            }
            for future in executor.as_completed(futures):
                s = futures[future]
                try:
                    report = future.result()
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
                report["submission"] = s.path
                _store(book, task, s, report, progress, out_dir)
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


def _store(book, task, s, report, progress, out_dir: str) -> None:
    report = clean_report(report)  # the submission's path and any message that quotes it
    # The page first, then the row: a batch killed between them grades the student again
    # (no row), so a stored row always has its page. Pictures go only to the page: kept in
    # the gradebook they would make it ~100 kB a student for no other reader.
    page_files.write_student_page(out_dir, task.id, s.student, report)
    book.record(
        task.id, s.student, s.content_hash, task.version, task.digest, page_files.without_pictures(report)
    )
    progress.update(report)


# --------------------------------------------------------------------------- exports


@dataclass
class Exported:
    task: str
    paths: list[str]
    matched: grade_files.Rows


def _write_detailed(
    book, task_id: str, out_dir: str, roster, excel: bool, reports, collection=None
) -> Exported:
    stored = book.stored(task_id)
    failed = {s for s, row in stored.items() if row.content_hash == REGRADE}
    matched = grade_files.match(reports, roster, failed)
    if collection is not None:
        from grader.classroom.collection import join

        matched = join(matched, task_id, collection, {s: row.content_hash for s, row in stored.items()})
    grades = grade_files.task_file(out_dir, "grades", task_id, "csv")
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
    formats=("detailed",),
    roster=None,
    task: str | None = None,
    assignment: str | None = None,
    excel: bool = False,
    collection=None,
) -> list[Exported]:
    """Write a task's grade files again from the gradebook (every task's, without ``task``):
    the detailed grades-<task>.csv and reports-<task>.jsonl always, and each LMS format
    asked for (they need ``roster``). With a ``collection`` (collection.py, with a roster),
    its tasks too, and each row says what was collected for that student, or why nothing was."""
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
            exported = _write_detailed(book, task_id, out_dir, roster, excel, reports, collection)
            points = grade_files.max_score(reports)
            if points is None and collection is not None:  # (no one's hand-in was graded)
                points = grade_files.max_score(
                    [("", {"max_score": r.max_score}) for r in collection.by_task.get(task_id, {}).values()]
                )
            column = assignment or task_id
            if "canvas" in formats:
                path = grade_files.task_file(out_dir, "canvas", task_id, "csv")
                grade_files.write_canvas(path, exported.matched, column, points, excel)
                exported.paths.append(path)
            if "moodle" in formats:
                path = grade_files.task_file(out_dir, "moodle", task_id, "csv")
                grade_files.write_moodle(path, exported.matched, column, excel)
                exported.paths.append(path)
            done.append(exported)
    finally:
        book.close()
    return done


class ExportError(Exception):
    pass
