"""Mutation checks: the function must leave its input arrays untouched and return a new one.

The worker sends back the arguments as it holds them after the call; the comparison with
the arguments as sent happens here, on the trusted side.
"""
from __future__ import annotations

from ..compare import Verdict, check_inputs_unchanged
from ..spec import CheckSpec
from .calls import run_cases


def inputs_untouched(check: CheckSpec, expected, outcome, sent: list) -> Verdict:
    verdict = check_inputs_unchanged(sent, outcome.inputs_after)
    if verdict.ok and outcome.aliases_input:
        return Verdict(False, "returned the input array itself (or a view of it); "
                              "return a new array.")
    return verdict


inputs_untouched.needs_expected = False
inputs_untouched.needs_inputs_back = True


def run(ctx, check: CheckSpec):
    return run_cases(ctx, check, inputs_untouched, ctx.case_set(check))
