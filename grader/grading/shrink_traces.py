"""Shrink traces: a shrink run once for a class, replayed for the students it fits.

A shrink (checks/calls.py) is derandomized: which input Hypothesis tries next depends only
on which of the inputs before it failed. So the inputs one submission's shrink tried, in
order, with whether each failed, are a trace that any other submission of the class with
the same outcomes would walk step by step. Replaying a trace calls the submission on its
inputs (pipelined, as a check's cases are); if every outcome matches, the shrink would have ended where the trace does,
and the smallest failure is the submission's own answer on the same input (its own message
and output). At the first outcome that differs the replay stops and the shrink runs. The
input shown is the same either way; only Hypothesis's own work (most of a shrink's time)
is saved. Traces are kept per check, within a byte budget, by the prepared task.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from grader.grading.value_size import nbytes
from grader.task.case_size import case_size
from grader.task.strategies import Drawn

TRACES_PER_CHECK = 4  # the likely different ways a class fails one check
BOOK_BYTES = 32 << 20  # all traces of a prepared task, inputs and expected outputs together

F = TypeVar("F")  # a failure (calls.Failure)


@dataclass(frozen=True)
class Step:
    drawn: Drawn
    expected: Any  # the reference's output on it (None: the judge needs none)
    answered: bool  # False: the reference defines no answer here; the input was passed over
    failed: bool


@dataclass(frozen=True)
class Trace:
    steps: tuple[Step, ...]
    nbytes: int


def trace_of(steps: list[Step]) -> Trace:
    return Trace(tuple(steps), sum(nbytes(s.drawn.args) + nbytes(s.expected) for s in steps))


@dataclass(frozen=True)
class Replayed(Generic[F]):
    matched: bool  # every outcome was the trace's: ``smallest`` is what the shrink finds
    smallest: tuple[Drawn, F] | None


def replay(trace: Trace, failures: Iterator[F | None]) -> Replayed[F]:
    """Walk ``trace`` with ``failures`` (the submission's failure on each answered step's
    input in turn, None where it passed); the smallest failure is kept as the shrink keeps
    it (the later of equal size). Stops taking failures at the first that differs."""
    smallest: tuple[Drawn, F] | None = None
    for step in trace.steps:
        failure = next(failures, None) if step.answered else None
        if (failure is not None) != step.failed:
            return Replayed(False, None)
        if failure is not None and (
            smallest is None or case_size(step.drawn.args) <= case_size(smallest[0].args)
        ):
            smallest = (step.drawn, failure)
    return Replayed(True, smallest)


@dataclass
class TraceBook:
    """The traces of a prepared task's checks (check name -> traces, oldest first)."""

    by_check: dict[str, list[Trace]] = field(default_factory=dict)
    held: int = 0  # bytes

    def of(self, check: str) -> list[Trace]:
        return list(self.by_check.get(check, ()))

    def add(self, check: str, trace: Trace) -> None:
        kept = self.by_check.setdefault(check, [])
        if len(kept) >= TRACES_PER_CHECK or self.held + trace.nbytes > BOOK_BYTES:
            return
        kept.append(trace)
        self.held += trace.nbytes
