"""Where submissions are graded: a local pool of processes (forked, each handed the task the
batch prepared before the pool started) or an existing Dask cluster (each worker prepares
a task once, when its first submission arrives). Each job carries the submission's bytes, so a
remote Dask worker needs no shared filesystem; a task goes to a remote worker as its files,
once. The batch rebuilds a pool whose processes were killed (``POOL_GENERATIONS``)."""

from __future__ import annotations

import concurrent.futures
import ctypes
import hashlib
import multiprocessing
import os
import signal
import sys
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from multiprocessing.util import Finalize
from typing import Any

from grader.authoring import load_task
from grader.grading import GradeOptions, PreparedTask, grade, prepare
from grader.sandbox import close_warm_workers
from grader.submission.file import SubmissionError, SubmissionFile
from grader.task.spec import Task

POOL_GENERATIONS = 3  # a pool whose processes were killed is rebuilt this many times

_task_folders: dict[str, str] = {}  # task digest -> where a remote worker unpacked it
# What this process grades with: the batch's prepared task, handed to a pool process when
# it starts (forked: nothing is copied), or one a Dask worker prepared itself, by folder.
_prepared: dict[tuple[str, str], PreparedTask] = {}


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


def grade_bytes(
    task_ref: str | TaskFiles, name: str, content: bytes, options: GradeOptions
) -> dict[str, Any]:
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
    task = load_task(task_ref)
    key = (task.folder, task.digest)
    if key not in _prepared:
        _prepared[key] = prepare(task, options.use_cache, profile_mistakes=False)
    return grade(task, SubmissionFile(name, content), options, _prepared[key]).to_dict()


def _start_pool_process(prepared: PreparedTask | None) -> None:
    """Pool processes (and through them their sandboxes) end when the batch is killed; on a
    normal end they close their warm workers (multiprocessing skips atexit there). Each
    grades with the batch's prepared task."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    Finalize(None, close_warm_workers, exitpriority=10)
    if prepared is not None:
        _prepared[(prepared.task.folder, prepared.task.digest)] = prepared


class LocalExecutor:
    def __init__(self, jobs: int, prepared: PreparedTask | None = None, fork: bool = True):
        # Forked, the pool's processes get ``prepared`` as it is in memory; spawned (not
        # Linux, or ``fork`` False: a process with threads of its own, the service), each
        # prepares the task itself (from the disk cache the batch filled).
        fork = fork and sys.platform.startswith("linux")
        context = multiprocessing.get_context("fork" if fork else "spawn")
        self.jobs = jobs
        self.pool = concurrent.futures.ProcessPoolExecutor(
            jobs,
            mp_context=context,
            initializer=_start_pool_process,
            initargs=(prepared if fork else None,),
        )

    def start_processes(self) -> None:
        """Start every pool process now, from the calling thread (a pool starts them as
        work comes), and wait until each has started."""
        concurrent.futures.wait([self.pool.submit(os.getpid) for _ in range(self.jobs)])

    def submit(self, *args: Any) -> concurrent.futures.Future[dict[str, Any]]:
        return self.pool.submit(grade_bytes, *args)

    def as_completed(self, futures: Iterable[Any]) -> Iterator[Any]:
        return concurrent.futures.as_completed(futures)

    @staticmethod
    def broken(exc: Exception) -> bool:
        return isinstance(exc, concurrent.futures.process.BrokenProcessPool)

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor:
    """Sends jobs to an existing Dask cluster; each Dask worker grades with the same sandbox."""

    def __init__(self, address: str):
        try:
            from distributed import Client  # (heavy and optional: imported when asked for)
        except ImportError:
            raise SubmissionError("--dask needs the dask extra: pip install 'grader[dask]'") from None
        self.client = Client(address, timeout="20s")
        self.shipped: dict[str, object] = {}

    def submit(self, task_ref: str | TaskFiles | Any, *args: Any) -> Any:
        # The task's files (18 MB for positional-encoding) go to each worker once, not with
        # every job: sent per job, they halved the class's throughput.
        if isinstance(task_ref, TaskFiles):
            if task_ref.digest not in self.shipped:
                self.shipped[task_ref.digest] = self.client.scatter(task_ref, broadcast=True)
            task_ref = self.shipped[task_ref.digest]
        return self.client.submit(grade_bytes, task_ref, *args, pure=False)

    def as_completed(self, futures: Iterable[Any]) -> Iterator[Any]:
        from distributed import as_completed  # (heavy and optional, as above)

        return as_completed(list(futures))

    @staticmethod
    def broken(exc: Exception) -> bool:
        return type(exc).__name__ == "KilledWorker"  # Dask gave up on workers that kept dying

    def close(self) -> None:
        self.client.close()
