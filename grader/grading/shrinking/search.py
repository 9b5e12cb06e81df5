"""The shrink of one check's failure: the check re-run under Hypothesis, which finds a
failure of its own and shrinks it, the class's earlier shrinks of the check walked first
(tree.py); the smallest failure met is shown (task/case_size.py). Only the input shown
changes: the verdict was decided on the task's cases."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from grader.cases import ReferenceFailed, avoided_edges
from grader.grading.checks.calls import CallOptions, Failure, Judge, evaluate
from grader.grading.shrinking.tree import Node, Step, same_args
from grader.records.statuses import MISMATCH, RAISED, Reason
from grader.task.case_size import case_size
from grader.task.spec import CheckSpec
from grader.task.strategies import Drawn

if TYPE_CHECKING:
    from grader.grading.context import Context

SHRINKABLE: tuple[Reason, ...] = (MISMATCH, RAISED)  # timeouts and crashes: the smallest in the set
SHRINK_SECONDS = 10.0  # per failing check; then the smallest failure found so far is shown


@dataclass(frozen=True)
class FirstFailure:
    """A check's failure on its case set, as the check found it: the smallest failing case
    (a shrink may show a smaller input), and how many calls and seconds it took."""

    check: CheckSpec[CallOptions]
    judge: Judge
    shown: Drawn
    failure: Failure
    tried: int
    start: float  # (time.monotonic() when the check began)


class _Found(Exception):
    """Tells Hypothesis that an input fails (which one: _shrink keeps the smallest)."""


def hypothesis_imported() -> None:
    """Wait for Hypothesis's import made ahead (hypothesis_driver.import_ahead), if any."""
    from grader.task.hypothesis_driver import imported_ahead  # (only to shrink a failure)

    imported_ahead()


def smaller_failure(ctx: Context, found: FirstFailure) -> tuple[Drawn, Failure] | None:
    """The smallest failure a shrink of the check finds (None: none)."""
    return _shrink(ctx, found.check, found.judge)


def _shrink(ctx: Context, check: CheckSpec[CallOptions], judge: Judge) -> tuple[Drawn, Failure] | None:
    """Re-run the check under Hypothesis, which finds a failure of its own and shrinks it
    (only where the reference is at hand to answer new inputs: not in a kit); the smallest
    failure it met (case_size.py) is returned. It only changes the input shown: the
    verdict was decided on the task's cases, and the time it takes is not the student's
    (Sandbox.outside_budget), at most SHRINK_SECONDS (and the calls under way) per check.
    The class's earlier shrinks of the check are walked first (shrinking/tree.py), unless the shrink
    cache is off (speedups.py)."""
    trees, store = ctx.prepared.shrink_trees, ctx.prepared.shrink_store if ctx.shrink_cache else None
    for path in store.new_paths(check) if store is not None else ():  # (other processes', runs')
        trees.add(check.name, path)
    walked: list[tuple[Node, Failure | None]] = []  # this submission's outcomes on the tree
    with ctx.sandbox.outside_budget():
        node = trees.root(check.name) if ctx.shrink_cache else None
        while node is not None:
            failure = _attempt(ctx, check, judge, node.drawn, node.expected) if node.answered else None
            walked.append((node, failure))
            following = node.after.get(failure is not None, ...)
            if following is ...:
                break  # no shrink went this way yet: Hypothesis goes on from here
            if following is None:  # the shrink ends here, as every one that came this way
                return _smallest([(n.drawn, f) for n, f in walked])
            node = following
    from grader.task.hypothesis_driver import Explorer  # (only to shrink a failure)

    explorer = ctx.prepared.explorers.get(check.name)
    if explorer is None:  # (built once per check and process: the prepared task keeps it)
        cases = ctx.case_set(check)
        avoid = avoided_edges(ctx.task, check, cases.cases[: cases.literal_count])
        explorer = ctx.prepared.explorers[check.name] = Explorer(check, shrink=True, avoid=avoid)
    met: list[tuple[Drawn, Failure | None]] = []
    steps: list[Step] = []
    stop = time.monotonic() + SHRINK_SECONDS
    out_of_time = []

    def body(drawn: Drawn) -> None:
        if time.monotonic() > stop:
            out_of_time.append(True)
            return  # out of time: no more calls, the smallest failure met so far stands
        walked_here = walked[len(steps)] if len(steps) < len(walked) else None
        if walked_here is not None and same_args(walked_here[0].drawn.args, drawn.args):
            node, failure = walked_here  # (asked already, on the tree: not sent again)
            steps.append(Step(drawn, node.expected, node.answered, failure is not None))
        else:
            walked.clear()
            try:
                expected = ctx.expected(check, drawn.args) if judge.needs_expected else None
            except ReferenceFailed:
                steps.append(Step(drawn, None, answered=False, failed=False))
                return  # not a case the task defines an answer for
            failure = _attempt(ctx, check, judge, drawn, expected)
            steps.append(Step(drawn, expected, answered=True, failed=failure is not None))
        met.append((drawn, failure))
        if failure is not None:
            raise _Found(failure.message)

    with ctx.sandbox.outside_budget():
        try:
            explorer.run(body)
            ended = True
        except _Found:
            ended = True
        except Exception:  # Hypothesis gave up (a flaky submission): a path no one else walks
            ended = False
    if ended and not out_of_time and ctx.shrink_cache:
        trees.add(check.name, steps)
        if store is not None:
            store.save(check, steps)
    return _smallest(met)


def _smallest(met: list[tuple[Drawn, Failure | None]]) -> tuple[Drawn, Failure] | None:
    """The smallest failure among the inputs a shrink met, in order (the later of equal size)."""
    smallest: tuple[Drawn, Failure] | None = None
    for drawn, failure in met:
        if failure is not None and (smallest is None or case_size(drawn.args) <= case_size(smallest[0].args)):
            smallest = (drawn, failure)
    return smallest


def _attempt(
    ctx: Context, check: CheckSpec[CallOptions], judge: Judge, drawn: Drawn, expected: Any
) -> Failure | None:
    """The failure a shrink keeps of one input (None: it passed, or failed in a way a shrink
    does not pursue)."""
    failure = evaluate(ctx, check, judge, drawn.args, expected)
    return failure if failure is not None and failure.reason in SHRINKABLE else None
