"""A worker started before the grading stack is imported, for `grader check` of one file.

Grading one file spends about 0.15 s importing numpy and the checks, reading the task and
preparing it, and a sandboxed worker takes about as long to start (Python, numpy, the
sandbox applied). Started one after the other, the second waits for the first; started from
task.yaml's limits read on their own (task_yaml.read_head: the full read's parse, without
the kinds), before those imports, the worker is ready when the grade asks for one. It is taken only if the grade's limits and tier turn out to be exactly
those it was started with; otherwise it is ended unused and the grade starts its own.
Until it is taken it has been sent nothing: the submission's bytes go to whichever worker
loads them. This module imports no numpy and nothing of the checks (that is its point).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator

from grader.grading.options import GradeOptions, tier_for
from grader.records.limits import Limits
from grader.sandbox import Spawner, WorkerProcess, start_worker
from grader.task import frameworks
from grader.task.task_yaml import read_head


class HeadStart:
    """A worker started ahead with ``limits`` in ``tier``, for the grade to take."""

    def __init__(self, limits: Limits, tier: str, process: WorkerProcess):
        self.limits, self.tier = limits, tier
        self.process: WorkerProcess | None = process

    def spawner(self, otherwise: Spawner) -> Spawner:
        """A spawner whose first worker is this one if it was started as asked, else
        ``otherwise``'s (this one is ended then: a worker is never kept for later)."""

        def spawn(limits: Limits, tier: str) -> WorkerProcess:
            process, self.process = self.process, None
            if process is not None:
                if (limits, tier) == (self.limits, self.tier):
                    return process
                process.kill()
            return otherwise(limits, tier)

        return spawn

    def close(self) -> None:
        """End the worker if no grade took it."""
        if self.process is not None:
            self.process.kill()
            self.process = None


@contextlib.contextmanager
def head_start(task_folder: str, options: GradeOptions) -> Iterator[HeadStart | None]:
    """A worker started for grading a file of the task in ``task_folder`` as ``options``
    say, ended on the way out unless a grade took it; None where it cannot be started ahead:
    a task.yaml this cannot read (the grade then says what is wrong with it), a task that
    allows a framework (its workers preload what the file imports: known only once the file
    is read), or no tier that works (the grade says why)."""
    started = None
    try:
        started = _start(task_folder, options)
    except Exception:  # whatever it is, the grade meets it again and says it properly
        started = None
    try:
        yield started
    finally:
        if started is not None:
            started.close()


def _start(task_folder: str, options: GradeOptions) -> HeadStart | None:
    head = read_head(task_folder)  # (task.yaml's limits and imports, parsed as a full read does)
    if frameworks.allowed_frameworks(head.allowed_imports):
        return None
    # as grading.grade works them out (with no framework to preload)
    limits = dataclasses.replace(head.limits, **options.limits)
    tier = tier_for(options)  # (no Task yet: never a kit-only tier ahead)
    return HeadStart(limits, tier, start_worker(limits, tier))
