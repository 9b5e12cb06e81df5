"""The service's dispatcher: one thread claims queued uploads from the database
(the store's fair choice) and grades each as `grader batch` does: in a pool of processes
(or on a Dask cluster), each with sandboxed workers, with the batch's options for someone
else's work. A pool that breaks is rebuilt and what it held is queued again; the grader's
own failure on an upload is recorded as that upload's error (the student sees that the
grader, not their code, failed, and staff may regrade). A database that is away is waited
for (said on /healthz), and what was grading meanwhile is recorded once it answers. The web server's process never runs
student code: it only stores bytes and reads results."""

from __future__ import annotations

import signal
import sys
import threading
import time
import traceback
import uuid
from typing import Any

from grader.classroom.executors import DaskExecutor, LocalExecutor, TaskFiles, task_files
from grader.grading import GradeOptions
from grader.records.result import ungradable
from grader.service.store import Claimed, Store
from grader.student_text import line
from grader.task.spec import Task

POLL_SECONDS = 0.05  # how often finished gradings are looked for while some run
IDLE_SECONDS = 1.0  # how often the queue is looked at when nothing runs (an upload wakes it sooner)
RETRY_MAX_SECONDS = 30.0  # the longest wait between looks at a database that is away


class Dispatcher:
    """Keeps up to ``slots`` uploads grading, fairly, until stopped."""

    def __init__(
        self,
        store: Store,
        tasks: dict[str, Task],
        options: GradeOptions,
        slots: int,
        dask_address: str | None = None,
    ):
        self.store, self.tasks, self.options, self.slots = store, tasks, options, slots
        self.dask_address = dask_address
        self.task_files: dict[str, TaskFiles] = {}  # (for Dask: read once per task)
        self.server = uuid.uuid4().hex  # this server's claims (a restart's are another's)
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name="grader-dispatcher", daemon=True)
        self.executor: LocalExecutor | DaskExecutor | None = None
        self.error: str | None = None  # why the dispatcher stopped, if it did by itself

    def start(self) -> int:
        """Queue again what a dead server was grading, start the pool, then dispatch; how
        many were queued again."""
        requeued = self.store.requeue_abandoned()
        self.executor = self._new_executor()
        if isinstance(self.executor, LocalExecutor):
            # Ctrl-C in the operator's terminal reaches the whole process group: the pool's
            # processes, started now with SIGINT ignored (and so for good: Python keeps an
            # ignored SIGINT), leave stopping to the server, which stops them itself.
            previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
            try:
                self.executor.start_processes()
            finally:
                signal.signal(signal.SIGINT, previous)
        self.thread.start()
        return requeued

    def stop(self) -> None:
        self.stopping.set()
        self.wake.set()
        self.thread.join(timeout=30)
        if self.executor is not None:
            self.executor.close()

    def _new_executor(self) -> LocalExecutor | DaskExecutor:
        if self.dask_address:
            return DaskExecutor(self.dask_address)
        # Spawned, not forked: this process runs a web server's threads, and a fork copies
        # whatever locks they hold. Each pool process prepares a task when it first grades it.
        return LocalExecutor(self.slots, fork=False)

    def _run(self) -> None:
        running: dict[Any, Claimed] = {}
        outages = 0
        while not self.stopping.is_set():
            try:
                self._dispatch(running)
                return
            except Exception as exc:
                if self.error is None:
                    outages = 0  # (the database answered since the last trouble)
                # /healthz answers anyone, so it names the failure's kind only: a database
                # error's words carry its SQL and parameters (a student's report) or a
                # PostgreSQL host and user. The operator reads them in the server's log.
                if outages == 0:
                    traceback.print_exc(file=sys.stderr)
                    sys.stderr.flush()
                if not _database_trouble(exc):
                    self.error = f"{type(exc).__name__} (the server's log says why)"
                    return
                # The database is away (restarted, unreachable, a table locked): grading
                # waits and looks again, said on /healthz meanwhile; what was grading goes
                # on and is recorded once the database answers.
                outages += 1
                self.error = f"{type(exc).__name__} (the server's log says why; trying again)"
                self.stopping.wait(min(RETRY_MAX_SECONDS, 0.5 * 2**outages))

    def _dispatch(self, running: dict[Any, Claimed]) -> None:
        """Claim, submit and record until stopped; a database error is raised to _run."""
        while not self.stopping.is_set():
            while len(running) < self.slots and not self.stopping.is_set():
                claimed = self.store.claim_next(self.server, self.tasks)
                self.error = None  # (the database answered)
                if claimed is None:
                    break
                try:
                    running[self._submit(claimed)] = claimed
                except Exception as exc:
                    assert self.executor is not None
                    if not self.executor.broken(exc):
                        raise
                    # A pool process died while idle (killed, out of memory): the
                    # pool refuses work from then on. A new pool; this one queued again.
                    self._renew_pool([claimed, *running.values()])
                    running.clear()
            if not running:
                self.wake.wait(IDLE_SECONDS)
                self.wake.clear()
                continue
            finished = [f for f in running if f.done()]
            if not finished:
                time.sleep(POLL_SECONDS)
                continue
            for future in finished:
                if future in running:  # (not queued again by a pool broken meanwhile)
                    self._record(running[future], future, running)
                    running.pop(future, None)  # (only once recorded: a database error keeps it)

    def _renew_pool(self, held: list[Claimed]) -> None:
        """A new pool in place of a broken one; what the broken one held goes back to the
        queue (each future of a broken pool fails: none of them is recorded)."""
        assert self.executor is not None
        self.executor.close()
        if not self.stopping.is_set():  # (a pool that breaks as the server stops stays closed)
            self.executor = self._new_executor()
        for again in held:
            self.store.requeue(again.id, self.server)

    def _submit(self, claimed: Claimed) -> Any:
        task = self.tasks[claimed.task]
        assert self.executor is not None
        # A Dask worker may be on another machine: it gets the task's files (sent to each
        # worker once), as grader batch --dask sends them; a pool process reads the folder.
        if self.dask_address:
            if task.id not in self.task_files:
                self.task_files[task.id] = task_files(task)
            task_ref: str | TaskFiles = self.task_files[task.id]
        else:
            task_ref = task.folder
        return self.executor.submit(task_ref, claimed.filename, claimed.content, self.options)

    def _record(self, claimed: Claimed, future: Any, running: dict[Any, Claimed]) -> None:
        task = self.tasks[claimed.task]
        try:
            report = future.result()
        except KeyboardInterrupt:
            # Ctrl-C in the server's terminal reaches its pool's processes too: the server
            # is stopping. The upload goes back to the queue, for the next start to grade.
            self.store.requeue(claimed.id, self.server)
            return
        except Exception as exc:
            assert self.executor is not None
            if self.executor.broken(exc):  # the pool's processes were killed: a new pool
                self._renew_pool([claimed, *running.values()])
                running.clear()
                return
            why = line(f"{type(exc).__name__}: {exc}", 300)
            report = ungradable(
                task.id,
                task.version,
                task.max_score,
                claimed.filename,
                f"the grader itself failed on this upload ({why}); this is not your code's doing: "
                "tell your instructor, who can grade it again",
            ).to_dict()
        report = {**report, "submission": claimed.filename}
        self.store.finish(claimed.id, self.server, report)


def _database_trouble(exc: Exception) -> bool:
    """A failure of the database's own (away, locked, a table gone): worth trying again."""
    from sqlalchemy.exc import DBAPIError

    return isinstance(exc, DBAPIError)
