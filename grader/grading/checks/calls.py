"""What example, property and mutation checks share: their options, and calls in the
sandbox judged here. A judge computes each verdict on the trusted side from the plain data
that came back (expected values never leave this side); a failure becomes the check's
result with the input it shows, as a call the student can paste (rebuild.py). Running a
check's case set and shrinking its failure is case_runs.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from grader.cases import split_arguments
from grader.grading.checks import fields
from grader.grading.checks.kind import Kind
from grader.grading.compare import Verdict, output_verdict
from grader.grading.pictures import picture
from grader.records.result import ERROR, FAILED, PASSED, CheckResult, Picture
from grader.records.statuses import (
    BUDGET,
    CRASHED,
    MALFORMED,
    MISMATCH,
    OK,
    RAISED,
    TIMEOUT,
    CheckStatus,
    Reason,
    call_reason,
)
from grader.records.worker_error import WorkerError
from grader.submission.source_map import location_text
from grader.task.check_kind import CheckOptions, Reading
from grader.task.rebuild import expression
from grader.task.spec import DEFAULT_CASES, CheckSpec
from grader.task.strategies import Drawn
from grader.task.tolerance import Tolerance

if TYPE_CHECKING:
    from grader.grading.context import Context

# --------------------------------------------------------------------------- their fields


@dataclass(frozen=True)
class CallOptions(CheckOptions):
    """The fields of a kind that calls a student function: its arguments and how its
    output is compared."""

    args: dict = field(default_factory=dict)
    compare: str = "values"
    select: str | None = None
    returns: dict = field(default_factory=dict)
    tolerance: Tolerance = Tolerance()

    @property
    def literal_cases(self) -> tuple[dict, ...]:
        """Literal argument sets, tried first (never shrunk)."""
        return ()

    @property
    def shows_work(self) -> bool:
        # A right type or shape alone is had by returning an empty array or the input's copy.
        return self.compare == "values"

    @property
    def expected_given(self) -> bool:
        """The task gives the expected value itself: the reference is not asked."""
        return False


@dataclass(frozen=True)
class DrawnOptions(CallOptions):
    """Property and mutation checks: cases drawn by Hypothesis after literal edge cases."""

    draw: dict = field(default_factory=dict)
    cases: int = DEFAULT_CASES
    edge_cases: tuple[dict, ...] = ()

    @property
    def literal_cases(self) -> tuple[dict, ...]:
        return self.edge_cases


CALL_FIELDS: dict[str, fields.JSON] = {"call": fields.CALL, "args": fields.ARGS}
COMPARE_FIELDS: dict[str, fields.JSON] = {
    "compare": fields.COMPARE,
    "select": fields.SELECT,
    "returns": fields.RETURNS,
}
DRAWN_FIELDS: dict[str, fields.JSON] = {
    **CALL_FIELDS,
    "draw": fields.DRAW,
    "cases": fields.CASE_COUNT,
    "edge_cases": fields.EDGE_CASES,
    **COMPARE_FIELDS,
    "tolerance": fields.TOLERANCE,
}


def call_options(r: Reading) -> dict[str, Any]:
    """The CallOptions fields of a check, once its arguments and index are checked."""
    fields.check_arguments(r)
    fields.check_select(r)
    raw = r.raw
    return dict(
        args=raw.get("args", {}),
        compare=raw.get("compare", "values"),
        select=raw.get("select"),
        returns=raw.get("returns", {}),
        tolerance=r.tolerance(),
    )


class OutputKind(Kind):
    """Example and property checks: a function's output compared with the expected one
    (``compare_output``), which the reference computes unless the task gives it."""

    def reference_computes_expected(self, options: CallOptions) -> bool:
        return not options.expected_given

    def compares_outputs(self) -> bool:
        return True

    def describe_mismatch(self, options: CallOptions) -> str:
        return {"type": "the result is of the wrong type", "shape": "the result has the wrong shape"}.get(
            options.compare, "the values differ from the reference"
        )


def read_drawn(r: Reading) -> DrawnOptions:
    cases = r.raw.get("cases")
    return DrawnOptions(
        **call_options(r),
        draw=r.raw.get("draw", {}),
        cases=cases if isinstance(cases, int) else r.default_cases,
        edge_cases=tuple(r.raw.get("edge_cases", ())),
    )


# --------------------------------------------------------------------------- running them


class Judge(Protocol):
    """Decides one call's verdict from what came back (and the expected value, if any);
    ``sent`` is the arguments by the names the task gives them, in the order sent."""

    needs_expected: bool
    needs_inputs_back: bool
    draws: bool  # a failure of its compares outputs: the page may picture both (pictures.py)
    # It judges what a call left behind, not what it returned (mutation): a call that raised
    # is judged as one that returned, and one of which nothing can be told (timed out,
    # crashed, never made for want of time) is left out of its cases (Failure.left_out).
    judges_what_is_left: bool

    def __call__(
        self, check: CheckSpec[Any], expected: Any, outcome: Any, sent: dict[str, Any]
    ) -> Verdict: ...


@dataclass
class Failure:
    reason: Reason  # mismatch | raised | timeout | crashed | malformed | budget
    message: str
    output: str = ""
    line: int | None = None  # where in the student's file it raised, when it did
    cell: int | None = None  # (in a notebook: the cell of that line)
    # what a values mismatch's picture is drawn from (expected, actual, select): drawn only
    # for the failure shown (failed()), not for each one met while shrinking
    outputs: tuple[Any, Any, str | None] | None = None
    # nothing can be told from this call (a judge that judges_what_is_left: it timed out,
    # crashed, or was never made): the case is left out of the check's cases, not failed
    left_out: bool = False


# A call that could not be judged at all (not the code's answer, wrong or right): the check's error.
UNJUDGED: tuple[Reason, ...] = (MALFORMED, BUDGET)
# Calls after which the state of their arguments is unknown (killed mid-call, or never
# made): a judge that judges_what_is_left leaves their cases out. A malformed answer is not
# among them: the worker's own answer, it stays the check's error.
LEFT_OUT: tuple[str, ...] = (TIMEOUT, CRASHED, BUDGET)


def evaluate(
    ctx: Context, check: CheckSpec[CallOptions], judge: Judge, args: dict, expected: Any
) -> Failure | None:
    params = ctx.task.functions[check.function()]
    positional, keywords = split_arguments(params, args)
    outcome = ctx.sandbox.call(
        check.function(),
        positional,
        keywords,
        return_inputs=judge.needs_inputs_back,
        limit=ctx.largest_call_limit(check),
    )
    return call_failure(check, judge, outcome, named(params, positional, keywords), expected)


def named(params: tuple[str, ...], positional: list, keywords: dict) -> dict[str, Any]:
    """The arguments of one call by name, in the order they are sent (the worker hands
    back the inputs in that order too)."""
    return {**dict(zip(params, positional)), **keywords}


def call_failure(
    check: CheckSpec[CallOptions], judge: Judge, outcome: Any, sent: dict[str, Any], expected: Any
) -> Failure | None:
    """The failure one call's outcome shows, judged here; None when it passed."""
    output = _output(outcome.stdout, outcome.stderr)
    after_raise = outcome.status == RAISED and judge.judges_what_is_left
    if outcome.status == RAISED and not after_raise:
        return Failure(
            RAISED,
            describe_error(outcome.error),
            output,
            error_line(outcome.error),
            error_cell(outcome.error),
        )
    left_out = judge.judges_what_is_left and outcome.status in LEFT_OUT
    if outcome.status in (TIMEOUT, CRASHED):
        return Failure(
            call_reason(outcome.status), f"the call {outcome.error.message}", output, left_out=left_out
        )
    if outcome.status != OK and not after_raise:
        return Failure(call_reason(outcome.status), outcome.error.message, output, left_out=left_out)
    verdict = judge(check, expected, outcome, sent)
    if not verdict.ok and after_raise:  # (what it left behind, and how it ended)
        verdict = Verdict(False, f"{verdict.message} (The call then {describe_error(outcome.error)}.)")
    if verdict.ok:
        return None
    outputs = (
        (expected, outcome.value, check.options.select)
        if judge.draws and check.options.compare == "values"
        else None
    )
    return Failure(MISMATCH, verdict.message, output, outputs=outputs)


class _CompareOutput:
    """The judge of example and property checks: the output against the reference's."""

    needs_expected = True
    needs_inputs_back = False
    draws = True
    judges_what_is_left = False

    def __call__(
        self, check: CheckSpec[CallOptions], expected: Any, outcome: Any, sent: dict[str, Any]
    ) -> Verdict:
        options = check.options
        return output_verdict(
            expected, outcome.value, options.compare, options.tolerance, options.select, options.returns
        )


compare_output = _CompareOutput()


def error_line(error: WorkerError) -> int | None:
    """The line of the student's file an exception points at: its innermost frame there
    (the worker keeps only those), or a SyntaxError's line."""
    line = error.frames[-1].line if error.frames else error.line
    return line if type(line) is int and line > 0 else None


def error_cell(error: WorkerError) -> int | None:
    """In a notebook, the cell of ``error_line`` (the Sandbox located it: source_map.py)."""
    cell = error.frames[-1].cell if error.frames else error.cell
    return cell if type(cell) is int and cell > 0 else None


def describe_error(error: WorkerError) -> str:
    text = f"raised {error.type if error.type is not None else 'an exception'}"
    if error.message:
        text += f": {error.message}"
    if error.frames:
        last = error.frames[-1]
        text += f" ({location_text(last.cell, last.line)} in {last.function}: {last.code})"
    elif error.line:
        text += f" ({location_text(error.cell, error.line)})"
    return text


def _output(stdout: str, stderr: str) -> str:
    parts = [s for s in (stdout.strip("\n"), stderr.strip("\n")) if s]
    return "\n".join(parts)


def format_call(function: str, params: tuple[str, ...], args: dict, recipes: dict | None = None) -> str:
    """The failing call as Python a student can paste and run (arguments in signature order,
    each written so that it rebuilds the very value sent: rebuild.py)."""
    recipes = recipes or {}
    ordered = [name for name in params if name in args] + [n for n in args if n not in params]
    return (
        f"{function}({', '.join(f'{name}={expression(args[name], recipes.get(name))}' for name in ordered)})"
    )


def passed(check: CheckSpec[Any], cases: int, seconds: float) -> CheckResult:
    return CheckResult(
        check.name,
        PASSED,
        check.points,
        check.points,
        description=check.description,
        function=check.call,
        cases=cases,
        hidden=check.hidden,
        seconds=seconds,
    )


def failed(
    check: CheckSpec[Any],
    params: tuple[str, ...],
    failure: Failure,
    shown: Drawn | None,
    cases: int,
    seconds: float,
) -> CheckResult:
    status: CheckStatus = ERROR if failure.reason in UNJUDGED else FAILED
    function = check.call or ""
    return CheckResult(
        check.name,
        status,
        0.0,
        check.points,
        message=failure.message,
        description=check.description,
        function=check.call,
        failing_input=(
            format_call(function, params, shown.args, shown.recipes) if shown is not None else None
        ),
        output=failure.output,
        cases=cases,
        hidden=check.hidden,
        seconds=seconds,
        line=failure.line,
        cell=failure.cell,
        reason=failure.reason,
        picture=None if check.hidden else _picture(failure),
    )


def _picture(failure: Failure) -> Picture | None:
    if failure.outputs is None:
        return None
    try:
        return picture(*failure.outputs)
    except Exception:  # a picture is feedback: whatever the answer makes it trip over
        return None  # costs the picture, never the verdict
