"""What example, property and mutation checks share: calls in the sandbox, judged here.

``run_cases`` sends a check's case set to the student's function in order (pipelined, see
Sandbox.calls) and a judge computes each verdict on the trusted side from the plain data
that came back (expected values never leave this side). When a generated case fails,
Hypothesis finds the smallest failing input, one ``evaluate`` at a time.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..cases import CaseSet, ReferenceFailed, split_arguments
from ..compare import Verdict, check_shape, check_type, check_values
from ..result import ERROR, FAILED, PASSED, CheckResult
from ..spec import CheckSpec

ARRAY_ELEMENTS_SHOWN = 24


@dataclass
class Failure:
    kind: str          # wrong | raised | timeout | crashed | error
    message: str
    output: str = ""
    line: int | None = None   # where in the student's file it raised, when it did


SHRINKABLE = ("wrong", "raised")  # timeouts and crashes are reported as first found


def run_cases(ctx, check: CheckSpec, judge, cases: CaseSet) -> CheckResult:
    start = time.monotonic()
    params = ctx.task.functions[check.call]
    sent = [split_arguments(params, args) for args in cases.cases]
    outcomes = ctx.sandbox.calls(check.call, sent, return_inputs=judge.needs_inputs_back)
    try:
        for tried, (args, expected, (positional, keywords), outcome) in enumerate(
                zip(cases.cases, cases.expected, sent, outcomes), start=1):
            failure = judged(check, judge, outcome, positional + list(keywords.values()), expected)
            if failure is not None:
                break
        else:
            return passed(check, len(cases.cases), time.monotonic() - start)
    finally:
        outcomes.close()  # calls sent ahead of a failure are not waited for
    if failure.kind in SHRINKABLE and tried > cases.literal_count:
        args, failure = _shrink(ctx, check, judge) or (args, failure)
    return failed(check, ctx.task.functions[check.call], failure, args, tried,
                  time.monotonic() - start)


class _Found(Exception):
    def __init__(self, args: dict, failure: Failure):
        super().__init__(failure.message)
        self.case, self.failure = args, failure


def _shrink(ctx, check: CheckSpec, judge) -> tuple[dict, Failure] | None:
    """Re-run the check under Hypothesis, which re-finds the failure and shrinks it (only
    where the reference is at hand to answer new inputs: not in a kit). It only changes the
    input shown: the verdict was decided on the task's cases."""
    from ..hypothesis_driver import explore
    if ctx.reference is None:
        return None

    def body(args: dict) -> None:
        try:
            expected = ctx.expected(check, args) if judge.needs_expected else None
        except ReferenceFailed:
            return  # not a case the task defines an answer for
        failure = evaluate(ctx, check, judge, args, expected)
        if failure is not None and failure.kind in SHRINKABLE:
            raise _Found(args, failure)

    try:
        explore(check, body, shrink=True)
    except _Found as found:
        return found.case, found.failure
    except Exception:  # Hypothesis could not reproduce it (a flaky submission): keep the first
        return None
    return None


def evaluate(ctx, check: CheckSpec, judge, args: dict, expected) -> Failure | None:
    positional, keywords = split_arguments(ctx.task.functions[check.call], args)
    outcome = ctx.sandbox.call(check.call, positional, keywords,
                               return_inputs=judge.needs_inputs_back)
    return judged(check, judge, outcome, positional + list(keywords.values()), expected)


def judged(check: CheckSpec, judge, outcome, sent: list, expected) -> Failure | None:
    """The failure one call's outcome shows, judged here; None when it passed."""
    output = _output(outcome.stdout, outcome.stderr)
    if outcome.status == "raised":
        return Failure("raised", describe_error(outcome.error), output, error_line(outcome.error))
    if outcome.status in ("timeout", "crashed"):
        return Failure(outcome.status, f"the call {outcome.error['message']}", output)
    if outcome.status != "ok":
        return Failure("error", outcome.error["message"], output)
    verdict = judge(check, expected, outcome, sent)
    return None if verdict.ok else Failure("wrong", verdict.message, output)


def compare_output(check: CheckSpec, expected, outcome, sent: list) -> Verdict:
    """The judge of example and property checks: the output against the reference's."""
    if check.compare == "type":
        return check_type(outcome.value, check.returns, expected)
    if check.compare == "shape":
        return check_shape(expected, outcome.value)
    return check_values(expected, outcome.value, check.tolerance, check.select)


compare_output.needs_expected = True
compare_output.needs_inputs_back = False


def error_line(error: dict) -> int | None:
    """The line of the student's file an exception points at: its innermost frame there
    (the worker keeps only those), or a SyntaxError's line."""
    frames = error.get("frames") or []
    line = frames[-1].get("line") if frames else error.get("line")
    return line if type(line) is int and line > 0 else None


def describe_error(error: dict) -> str:
    text = f"raised {error.get('type', 'an exception')}"
    if error.get("message"):
        text += f": {error['message']}"
    frames = error.get("frames") or []
    if frames:
        last = frames[-1]
        text += f" (line {last['line']} in {last['function']}: {last['code']})"
    elif error.get("line"):
        text += f" (line {error['line']})"
    return text


def _output(stdout: str, stderr: str) -> str:
    parts = [s for s in (stdout.strip("\n"), stderr.strip("\n")) if s]
    return "\n".join(parts)


def format_call(function: str, params: tuple[str, ...], args: dict) -> str:
    """The failing call as Python a student can paste and run (arguments in signature order)."""
    ordered = [name for name in params if name in args] + [n for n in args if n not in params]
    return f"{function}({', '.join(f'{name}={format_value(args[name])}' for name in ordered)})"


def format_value(value) -> str:
    if isinstance(value, np.ndarray):
        if value.size and np.all(value == value.flat[0]):
            return f"np.full({value.shape}, {value.flat[0].item()!r})"
        if value.size <= ARRAY_ELEMENTS_SHOWN:
            return f"np.array({np.array2string(value, separator=', ', precision=17).replace(chr(10), '')})"
        return (f"<{value.dtype} array of shape {value.shape}, values from {value.min():.6g} "
                f"to {value.max():.6g}>")
    if isinstance(value, np.generic):
        return repr(value.item())
    return repr(value)


def passed(check: CheckSpec, cases: int, seconds: float) -> CheckResult:
    return CheckResult(check.name, PASSED, check.points, check.points,
                       description=check.description, function=check.call, cases=cases,
                       hidden=check.hidden, seconds=seconds)


def failed(check: CheckSpec, params: tuple[str, ...], failure: Failure, args: dict | None,
           cases: int, seconds: float) -> CheckResult:
    status = ERROR if failure.kind == "error" else FAILED
    return CheckResult(check.name, status, 0.0, check.points, message=failure.message,
                       description=check.description, function=check.call,
                       failing_input=format_call(check.call, params, args) if args is not None else None,
                       output=failure.output, cases=cases, hidden=check.hidden, seconds=seconds,
                       line=failure.line)
