"""Property checks: Hypothesis-generated inputs (plus literal edge cases), each output
compared with the reference's; a failure is reported with its shrunk, minimal input."""

from __future__ import annotations

from typing import TYPE_CHECKING

from grader.grading.checks.calls import DRAWN_FIELDS, DrawnOptions, OutputKind, compare_output, read_drawn
from grader.grading.checks.case_runs import run_cases
from grader.grading.checks.kind import FUNCTIONS
from grader.records.result import CheckResult
from grader.task.check_kind import Reading
from grader.task.spec import CheckSpec

if TYPE_CHECKING:
    from grader.grading.context import Context


class Property(OutputKind):
    name = "property"
    families = FUNCTIONS
    fields = DRAWN_FIELDS
    required = ("call", "args")

    def read(self, reading: Reading) -> DrawnOptions:
        return read_drawn(reading)

    def draws_cases(self) -> bool:
        return True

    def run(self, ctx: Context, check: CheckSpec[DrawnOptions]) -> CheckResult:
        return run_cases(ctx, check, compare_output, ctx.case_set(check))


KIND = Property()
