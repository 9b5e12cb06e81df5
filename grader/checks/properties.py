"""Property checks: Hypothesis-generated inputs (plus literal edge cases), each output
compared with the reference's; a failure is reported with its shrunk, minimal input."""
from __future__ import annotations

from ..spec import CheckSpec
from .calls import compare_output, run_cases


def run(ctx, check: CheckSpec):
    return run_cases(ctx, check, compare_output, ctx.case_set(check))
