"""What students may see of a Result: a hidden check keeps its name, status and points,
but not its message, failing input, output or time (which could reveal hidden inputs or
expected values: a submission can print them while it passes, or take time that depends
on them). The total time shown counts visible checks only. Done on the trusted side,
before any renderer runs; staff views skip it."""
from __future__ import annotations

import dataclasses

from .result import PASSED, SKIPPED, Result

HIDDEN_NOTE = "hidden check: its inputs and expected values are not shown"


def for_students(result: Result) -> Result:
    checks = []
    for check in result.checks:
        if check.hidden:
            message = check.message if check.status in (PASSED, SKIPPED) else \
                f"{check.status} ({HIDDEN_NOTE})"
            check = dataclasses.replace(check, message=message, failing_input=None, output="",
                                        seconds=0.0, line=None, picture=None)
        checks.append(check)
    shown_seconds = sum(c.seconds for c in result.checks if not c.hidden)
    return dataclasses.replace(result, checks=checks, seconds=round(shown_seconds, 3))
