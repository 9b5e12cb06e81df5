"""Example checks: fixed argument sets, such as a statement's worked examples. The expected
value is the reference's output, or a literal ``expect:`` given in task.yaml."""
from __future__ import annotations

import numpy as np

from ..cases import CaseSet
from ..spec import CheckSpec
from ..strategies import literal_case
from .calls import compare_output, run_cases


def literal_expectation(check: CheckSpec):
    try:
        value = np.asarray(check.expect)
    except ValueError:
        return check.expect
    return value if value.dtype.kind in "biufc" else check.expect


def run(ctx, check: CheckSpec):
    if check.has_expect:
        cases = CaseSet([literal_case(check.fixed_cases[0])], [literal_expectation(check)], 1)
    else:
        cases = ctx.case_set(check)
    return run_cases(ctx, check, compare_output, cases)
