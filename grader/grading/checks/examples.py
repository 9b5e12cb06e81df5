"""Example checks: fixed argument sets, such as a statement's worked examples. The expected
value is the reference's output, or a literal ``expect:`` given in task.yaml."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from grader.grading.checks import fields
from grader.grading.checks.calls import (
    CALL_FIELDS,
    COMPARE_FIELDS,
    CallOptions,
    OutputKind,
    call_options,
    compare_output,
)
from grader.grading.checks.case_runs import run_cases
from grader.grading.checks.kind import FUNCTIONS
from grader.records.result import CheckResult
from grader.task.check_kind import Reading
from grader.task.spec import CheckSpec

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


def literal_expectation(options: ExampleOptions) -> Any:
    try:
        value = np.asarray(options.expect)
    except ValueError:
        return options.expect
    return value if value.dtype.kind in "biufc" else options.expect


EXAMPLE_FIELDS = {
    **CALL_FIELDS,
    "cases": {"oneOf": [fields.CASE_COUNT, fields.LITERAL_CASES]},
    **COMPARE_FIELDS,
    "expect": {"description": "Literal expected value; by default the reference computes it."},
    "tolerance": fields.TOLERANCE,
}


class Example(OutputKind):
    name = "example"
    families = FUNCTIONS
    fields = EXAMPLE_FIELDS
    required = ("call",)

    def read(self, reading: Reading) -> ExampleOptions:
        return read(reading)

    def given_case(self, options: ExampleOptions) -> tuple[dict[str, Any], Any] | None:
        """The literal expect: of an example that gives one, on its one argument set."""
        if not options.has_expect:
            return None
        return options.fixed_cases[0], literal_expectation(options)

    def run(self, ctx: Context, check: CheckSpec[ExampleOptions]) -> CheckResult:
        return run_cases(ctx, check, compare_output, ctx.check_cases(check))


KIND = Example()
