"""A check's case set run in the sandbox, and its failure shrunk (example, property and
mutation checks).

``run_cases`` sends a check's case set to the student's function, smallest first
(case_size.py; pipelined, see Sandbox.calls), each answer judged here (calls.py): the first
failure is the smallest failing case of the set. Where the reference is at hand, Hypothesis
also looks for a failing input of its own and shrinks it, one ``evaluate`` at a time, for a
literal edge case as for a generated one; the smaller of the two is shown. A visible check's
shrink waits until the other visible checks have run (run.py: ``Context.shrinks_later``),
so that the worker computes those while this process imports Hypothesis.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Generator
from typing import TYPE_CHECKING, cast

from grader.cases import CaseSet, split_arguments
from grader.grading.checks.calls import (
    CallOptions,
    DrawnOptions,
    Failure,
    Judge,
    call_failure,
    failed,
    named,
    passed,
)
from grader.grading.policy import near_miss
from grader.grading.shrinking.search import SHRINKABLE, FirstFailure, smaller_failure
from grader.records.result import SKIPPED, CheckResult
from grader.records.statuses import CRASHED, MISMATCH, OK, RAISED, TIMEOUT
from grader.task.case_size import case_size, smallest_first
from grader.task.spec import CheckSpec
from grader.task.strategies import Drawn

if TYPE_CHECKING:
    from grader.grading.context import Context

# A visible values check keeps the answers on its first cases (the smallest) and on the input
# it shows: a diagnosis (diagnosis.py) observes those first, and need not ask for them again.
OBSERVED_FIRST = 3


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
            failure = call_failure(
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
    first = FirstFailure(
        check, judge, Drawn(cases.cases[index], cases.recipes_of(index)), failure, tried, start
    )
    if failure.reason in SHRINKABLE and isinstance(check.options, DrawnOptions) and ctx.reference is not None:
        if ctx.shrinks_later is not None:  # (run.py: shrunk once the other checks have run)
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


def shrunk(ctx: Context, found: FirstFailure) -> CheckResult:
    """The check's result once its failure is shrunk (the smaller input, if one fails)."""
    return settled(ctx, found, smaller_failure(ctx, found))


def settled(ctx: Context, found: FirstFailure, smaller: tuple[Drawn, Failure] | None) -> CheckResult:
    """The check's result with the failure its shrink found, if that input is no larger."""
    if smaller is not None and case_size(smaller[0].args) <= case_size(found.shown.args):
        found = dataclasses.replace(found, shown=smaller[0], failure=smaller[1])
    return shown_as_found(ctx, found)


def shown_as_found(ctx: Context, found: FirstFailure) -> CheckResult:
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
