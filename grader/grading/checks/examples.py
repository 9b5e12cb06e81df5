"""Example checks: fixed argument sets, such as a statement's worked examples. The expected
value is the reference's output, or a literal ``expect:`` given in task.yaml."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from grader.cases.model import CaseSet
from grader.grading.checks import fields
from grader.grading.checks.calls import (
    CALL_FIELDS,
    COMPARE_FIELDS,
    CallOptions,
    call_options,
    compare_output,
    mismatch_meaning,
)
from grader.grading.checks.case_runs import run_cases
from grader.grading.checks.kind import FUNCTIONS, Kind, Reading
from grader.records.result import CheckResult
from grader.task.spec import CheckSpec
from grader.task.strategies import literal_case

if TYPE_CHECKING:
    from grader.grading.context import Context


@dataclass(frozen=True)
class ExampleOptions(CallOptions):
    fixed_cases: tuple[dict, ...] = ()  # literal argument sets (args: alone, or cases:)
    expect: Any = None  # a literal expected value...
    has_expect: bool = False  # ...when one is given (None is a value too)

    @property
    def literal_cases(self) -> tuple[dict, ...]:
        return self.fixed_cases

    @property
    def expected_given(self) -> bool:
        return self.has_expect


def read(r: Reading) -> ExampleOptions:
    options = call_options(r)
    fixed = r.raw["cases"] if isinstance(r.raw.get("cases"), list) else []
    if "expect" in r.raw and len(fixed) > 1:
        r.problem(r.at + ("expect",), "a literal expect: fits one argument set; split the cases into checks.")
    return ExampleOptions(
        **options,
        fixed_cases=tuple(fixed) or (options["args"],),
        expect=r.raw.get("expect"),
        has_expect="expect" in r.raw,
    )


def literal_expectation(check: CheckSpec[ExampleOptions]) -> Any:
    try:
        value = np.asarray(check.options.expect)
    except ValueError:
        return check.options.expect
    return value if value.dtype.kind in "biufc" else check.options.expect


def check_cases(check: CheckSpec, case_set_of: Callable[[CheckSpec], CaseSet]) -> CaseSet:
    """The cases an example or property check tries, with their expected outputs: the
    literal expect: of an example that gives one, else the check's case set (``case_set_of``)."""
    if getattr(check.options, "has_expect", False):
        return CaseSet([literal_case(check.options.fixed_cases[0])], [literal_expectation(check)], 1)
    return case_set_of(check)


def run(ctx: Context, check: CheckSpec[ExampleOptions]) -> CheckResult:
    return run_cases(ctx, check, compare_output, ctx.check_cases(check))


KIND = Kind(
    "example",
    FUNCTIONS,
    run,
    read,
    required=("call",),
    expected_values=True,
    mismatch=mismatch_meaning,
    fields={
        **CALL_FIELDS,
        "cases": {"oneOf": [fields.CASE_COUNT, fields.LITERAL_CASES]},
        **COMPARE_FIELDS,
        "expect": {"description": "Literal expected value; by default the reference computes it."},
        "tolerance": fields.TOLERANCE,
    },
)
