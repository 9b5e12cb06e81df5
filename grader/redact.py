"""What students may see of a Result: a hidden check keeps its name, status and points,
but not its message, failing input or output (which could reveal hidden inputs or expected
values). Done on the trusted side, before any renderer runs; staff views skip it."""
from __future__ import annotations

import dataclasses

from .result import PASSED, SKIPPED, Result

HIDDEN_NOTE = "hidden check: its inputs and expected values are not shown"


def for_students(result: Result) -> Result:
    checks = []
    for check in result.checks:
        if check.hidden and check.status not in (PASSED, SKIPPED):
            check = dataclasses.replace(check, message=f"{check.status} ({HIDDEN_NOTE})",
                                        failing_input=None, output="")
        checks.append(check)
    return dataclasses.replace(result, checks=checks)
