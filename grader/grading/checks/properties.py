"""Property checks: Hypothesis-generated inputs (plus literal edge cases), each output
compared with the reference's; a failure is reported with its shrunk, minimal input."""

from __future__ import annotations

from typing import TYPE_CHECKING

from grader.grading.checks.calls import (
    DRAWN_FIELDS,
    DrawnOptions,
    compare_output,
    mismatch_meaning,
    read_drawn,
)
from grader.grading.checks.case_runs import run_cases
from grader.grading.checks.kind import FUNCTIONS, Kind
from grader.records.result import CheckResult
from grader.task.spec import CheckSpec

if TYPE_CHECKING:
    from grader.grading.context import Context


def run(ctx: Context, check: CheckSpec[DrawnOptions]) -> CheckResult:
    return run_cases(ctx, check, compare_output, ctx.case_set(check))


KIND = Kind(
    "property",
    FUNCTIONS,
    run,
    read_drawn,
    fields=DRAWN_FIELDS,
    required=("call", "args"),
    generated_cases=True,
    expected_values=True,
    mismatch=mismatch_meaning,
)
