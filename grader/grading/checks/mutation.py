"""Mutation checks: the function must leave its input arrays untouched and return a new one.

The evidence that an input was changed is not the worker's word: the grader hands the
argument arrays over in memory it shares with the worker and keeps its own handle to (see
sandbox/inside/shared.py), reads them back itself after the answer, and compares them here with
the arguments as sent. Whether the result *is* an input (or a view of one) can only be
observed inside the sandbox, where student code could hide it: that evidence may cost a
submission the check, never earn it, and the message says where it comes from.

The arguments still reach the function through the worker's harness, in the submission's
own process. A file that can reach that harness (introspection, dynamic code, a module
reached as an attribute: imports.harness_reach) gets no credit here.

Leaving the input alone is how, not what: returning ``x.copy()`` or garbage does it too, so
the check counts only when a check of what the same function returns passes (policy.py).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np

from grader.grading.checks.calls import DRAWN_FIELDS, DrawnOptions, read_drawn
from grader.grading.checks.case_runs import run_cases
from grader.grading.checks.imports import harness_reach
from grader.grading.checks.kind import FUNCTIONS, Kind
from grader.grading.compare import Verdict, check_inputs_unchanged
from grader.records.result import FAILED, PASSED, CheckResult
from grader.records.statuses import UNVERIFIED
from grader.task.check_kind import Reading
from grader.task.spec import CheckSpec

if TYPE_CHECKING:
    from grader.grading.context import Context


class _InputsUntouched:
    """The judge of mutation checks: the inputs as read back, against the inputs as sent."""

    needs_expected = False
    needs_inputs_back = True
    draws = False
    judges_what_is_left = True  # (a raise is no mutation; a timeout tells nothing: calls.py)

    def __call__(self, check: CheckSpec[Any], expected: Any, outcome: Any, sent: dict[str, Any]) -> Verdict:
        verdict = check_inputs_unchanged(sent, outcome.inputs_after)
        if verdict.ok and outcome.aliases_input:
            arrays = [f"`{name}`" for name, value in sent.items() if isinstance(value, np.ndarray)]
            which = (
                f"its argument {arrays[0]}"
                if len(arrays) == 1
                else f"one of its arguments ({', '.join(arrays)})"
            )
            return Verdict(
                False,
                f"your function returned {which} itself (or a view of it), as "
                "observed inside the sandbox; return a new array.",
            )
        return verdict


inputs_untouched = _InputsUntouched()


class Mutation(Kind):
    name = "mutation"
    families = FUNCTIONS
    fields = DRAWN_FIELDS
    required = ("call", "args")

    def read(self, reading: Reading) -> DrawnOptions:
        return read_drawn(reading)

    def draws_cases(self) -> bool:
        return True

    def counts_only_with_work(self) -> bool:
        return True

    def describe_mismatch(self, options: DrawnOptions) -> str:
        return "the function changed an argument in place or returned it"

    def run(self, ctx: Context, check: CheckSpec[DrawnOptions]) -> CheckResult:
        result = run_cases(ctx, check, inputs_untouched, ctx.case_set(check))
        # The arguments reach the function through the worker's harness, which runs in the
        # submission's own process: code that can reach that harness could hand the function
        # copies, so the evidence is worth nothing for it (asked after the calls: what the
        # worker saw during them counts too).
        reach = harness_reach(ctx) if result.status == PASSED else []
        if not reach:
            return result
        return dataclasses.replace(
            result,
            status=FAILED,
            score=0.0,
            reason=UNVERIFIED,
            message=(
                f"not verified: the file can reach the grader's code that hands the function its "
                f"arguments ({', '.join(reach[:5])}), so an unchanged input proves nothing; "
                f"remove that code."
            ),
        )


KIND = Mutation()
