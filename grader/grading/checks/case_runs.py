"""A check's case set run in the sandbox, and its failure shrunk (example, property and
mutation checks).

``run_cases`` sends a check's case set to the student's function, smallest first
(case_size.py; pipelined, see Sandbox.calls), each answer judged here (calls.py): the first
failure is the smallest failing case of the set. Where the reference is at hand, Hypothesis
also looks for a failing input of its own and shrinks it, one ``evaluate`` at a time, for a
literal edge case as for a generated one; the smaller of the two is shown. A visible check's
shrink waits until the other visible checks have run (grade.py: ``Context.shrinks_later``),
so that the worker computes those while this process imports Hypothesis.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from grader.grading.case_set import CaseSet, ReferenceFailed
from grader.grading.cases import avoided_edges, split_arguments
from grader.grading.checks.calls import (
    CallOptions,
    DrawnOptions,
    Failure,
    Judge,
    evaluate,
    failed,
    judged,
    named,
    passed,
)
from grader.grading.policy import near_miss
from grader.grading.shrink_traces import Node, Step, same_args
from grader.records.result import SKIPPED, CheckResult
from grader.records.statuses import CRASHED, MISMATCH, OK, RAISED, TIMEOUT, Reason
from grader.task.case_size import case_size, smallest_first
from grader.task.spec import CheckSpec
from grader.task.strategies import Drawn

if TYPE_CHECKING:
    from grader.grading.context import Context

# A visible values check keeps the answers on its first cases (the smallest) and on the input
# it shows: a diagnosis (diagnosis.py) observes those first, and need not ask for them again.
OBSERVED_FIRST = 3
SHRINKABLE: tuple[Reason, ...] = (MISMATCH, RAISED)  # timeouts and crashes: the smallest in the set
SHRINK_SECONDS = 10.0  # per failing check; then the smallest failure found so far is shown


def run_cases(ctx: Context, check: CheckSpec[CallOptions], judge: Judge, cases: CaseSet) -> CheckResult:
    start = time.monotonic()
    params = ctx.task.functions[check.function()]
    order = smallest_first(cases.cases)
    sent = [split_arguments(params, cases.cases[i]) for i in order]
    limits = ctx.call_limits(check, cases)  # each case's own, from the reference's time on it
    # (a generator: closing it stops waiting for the answers of calls sent ahead)
    outcomes = cast(
        Generator,
        ctx.sandbox.calls(
            check.function(), sent, return_inputs=judge.needs_inputs_back, limits=[limits[i] for i in order]
        ),
    )
    observed = not check.hidden and judge.draws  # (a diagnosis may look at its answers)
    left_out: list[Failure] = []  # cases nothing could be told of (judges_what_is_left)
    try:
        # (``tried``: how many calls it took, read after the loop)
        for tried, (index, (positional, keywords), outcome) in enumerate(  # noqa: B007
            zip(order, sent, outcomes), start=1
        ):
            failure = judged(
                check, judge, outcome, named(params, positional, keywords), cases.expected[index]
            )
            if observed and tried <= OBSERVED_FIRST and outcome.status in (OK, RAISED):
                ctx.remember_answer(check, cases.cases[index], outcome.value, outcome.status == RAISED)
            if failure is not None and failure.left_out:
                left_out.append(failure)
                if _stop_leaving_out(ctx, check, left_out):
                    break
                continue
            if failure is not None:
                break
        else:
            return _passed_on_what_was_told(check, len(cases.cases), left_out, start)
    finally:
        outcomes.close()  # calls sent ahead of a failure are not waited for
    if failure is None or failure.left_out:  # stopped leaving cases out: not all were judged
        return _untold(check, len(cases.cases), tried - len(left_out), left_out, start)
    first = Found(check, judge, Drawn(cases.cases[index], cases.recipes_of(index)), failure, tried, start)
    if failure.reason in SHRINKABLE and isinstance(check.options, DrawnOptions) and ctx.reference is not None:
        if ctx.shrinks_later is not None:  # (grade.py: shrunk once the other checks have run)
            from grader.task.hypothesis_driver import import_ahead  # (only to shrink a failure)

            ctx.shrinks_later.append(first)
            import_ahead()  # Hypothesis, imported while the worker computes the other checks
            return failed(check, params, failure, first.shown, tried, time.monotonic() - start)
        return shrunk(ctx, first)
    return shown_as_found(ctx, first)


MAX_LEFT_OUT = 3  # calls a check leaves out that cost a limit each (timed out, crashed)


def _stop_leaving_out(ctx: Context, check: CheckSpec[CallOptions], left_out: list[Failure]) -> bool:
    """Whether a check that leaves cases out (checks/mutation.py) stops sending its cases:
    its function timed out and never finished a call (another would only cost another
    timeout: Sandbox.stalled), or more than MAX_LEFT_OUT of its calls timed out or crashed
    (each costs a limit of the submission's time budget). A call never made for want of
    time costs nothing: the rest are left out in turn."""
    costly = [f for f in left_out if f.reason in (TIMEOUT, CRASHED)]
    return len(costly) > MAX_LEFT_OUT or (bool(costly) and ctx.sandbox.stalled(check.function()) is not None)


def _left_out_note(left_out: list[Failure]) -> str:
    first = left_out[0]
    what = {TIMEOUT: "timed out", CRASHED: "crashed"}.get(first.reason, "was not made")
    calls = "the first of them" if len(left_out) > 1 else "it"
    return (
        f"nothing can be told of the arguments after a call that {what}, and "
        f"{len(left_out)} did ({calls}: {first.message})"
    )


def _passed_on_what_was_told(
    check: CheckSpec[CallOptions], total: int, left_out: list[Failure], start: float
) -> CheckResult:
    """Every case sent was judged or left out: passed on those judged, if any; skipped
    (with why) if none was."""
    if len(left_out) >= total:
        return _untold(check, total, 0, left_out, start)
    judged_cases = total - len(left_out)
    result = passed(check, judged_cases, time.monotonic() - start)
    if not left_out:
        return result
    return dataclasses.replace(
        result,
        message=f"passed on the {judged_cases} of its {total} cases that could be judged; "
        f"{len(left_out)} left out: {_left_out_note(left_out)}.",
    )


def _untold(
    check: CheckSpec[CallOptions], total: int, told: int, left_out: list[Failure], start: float
) -> CheckResult:
    """A check that leaves cases out, when too few could be judged: skipped, with why (the
    calls' failures cost the checks that needed their results, not this one)."""
    why = (
        f"none of its {total} cases could be judged"
        if told == 0
        else f"it stopped with {told} of its {total} cases judged"
    )
    return CheckResult(
        check.name,
        SKIPPED,
        0.0,
        check.points,
        message=f"skipped: {why}: {_left_out_note(left_out)}.",
        description=check.description,
        function=check.call,
        cases=told,
        hidden=check.hidden,
        seconds=time.monotonic() - start,
        output=left_out[0].output,
        reason=left_out[0].reason,
    )


@dataclass(frozen=True)
class Found:
    """A check's failure on its case set, as the check found it: the smallest failing case
    (a shrink may show a smaller input), and how many calls and seconds it took."""

    check: CheckSpec[CallOptions]
    judge: Judge
    shown: Drawn
    failure: Failure
    tried: int
    start: float  # (time.monotonic() when the check began)


def shrunk(ctx: Context, found: Found) -> CheckResult:
    """The check's result once its failure is shrunk (the smaller input, if one fails)."""
    return settled(ctx, found, smaller_failure(ctx, found))


def settled(ctx: Context, found: Found, smaller: tuple[Drawn, Failure] | None) -> CheckResult:
    """The check's result with the failure its shrink found, if that input is no larger."""
    if smaller is not None and case_size(smaller[0].args) <= case_size(found.shown.args):
        found = dataclasses.replace(found, shown=smaller[0], failure=smaller[1])
    return shown_as_found(ctx, found)


def shown_as_found(ctx: Context, found: Found) -> CheckResult:
    """The check's failed result, and what the diagnosis and the policy keep of it."""
    check, failure, shown = found.check, found.failure, found.shown
    if not check.hidden and found.judge.draws:  # what a diagnosis looks at first
        if failure.outputs is not None:
            ctx.remember_answer(check, shown.args, failure.outputs[1])
        elif failure.reason == RAISED:
            ctx.remember_answer(check, shown.args, raised=True)
    if not check.hidden and failure.reason == MISMATCH:
        ctx.shown[check.name] = shown.args  # what diagnosis.py observes first (trusted side only)
        if failure.outputs is not None and _came_near(check, failure, shown.args):
            ctx.near.add(check.name)  # wrong values that still show work (policy.py)
    params = ctx.task.functions[check.function()]
    return failed(check, params, failure, shown, found.tried, time.monotonic() - found.start)


def _came_near(check: CheckSpec[CallOptions], failure: Failure, args: dict) -> bool:

    assert failure.outputs is not None
    expected, got, select = failure.outputs
    try:
        return near_miss(expected, got, args.values(), check.options.tolerance, select)
    except Exception:  # (an answer the measure trips over shows nothing)
        return False


class _Found(Exception):
    """Tells Hypothesis that an input fails (which one: _shrink keeps the smallest)."""


def hypothesis_imported() -> None:
    """Wait for Hypothesis's import made ahead (hypothesis_driver.import_ahead), if any."""
    from grader.task.hypothesis_driver import imported_ahead  # (only to shrink a failure)

    imported_ahead()


def smaller_failure(ctx: Context, found: Found) -> tuple[Drawn, Failure] | None:
    """The smallest failure a shrink of the check finds (None: none)."""
    return _shrink(ctx, found.check, found.judge)


def _shrink(ctx: Context, check: CheckSpec[CallOptions], judge: Judge) -> tuple[Drawn, Failure] | None:
    """Re-run the check under Hypothesis, which finds a failure of its own and shrinks it
    (only where the reference is at hand to answer new inputs: not in a kit); the smallest
    failure it met (case_size.py) is returned. It only changes the input shown: the
    verdict was decided on the task's cases, and the time it takes is not the student's
    (Sandbox.outside_budget), at most SHRINK_SECONDS (and the calls under way) per check.
    The class's earlier shrinks of the check are walked first (shrink_traces.py)."""
    trees, store = ctx.prepared.shrink_trees, ctx.prepared.shrink_store
    for path in store.new_paths(check) if store is not None else ():  # (other processes', runs')
        trees.add(check.name, path)
    walked: list[tuple[Node, Failure | None]] = []  # this submission's outcomes on the tree
    with ctx.sandbox.outside_budget():
        node = trees.root(check.name)
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
    if ended and not out_of_time:
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
