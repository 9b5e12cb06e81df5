"""What students may see of a Result: a hidden check shows its name, what the task says of it
(description, function) and its points, and whether it passed; nothing else.

Everything else a check result holds is something the submission can modulate while a
hidden input is in its hands, and so a channel for that input: the message (what it printed,
the variable it named), the failing input, the output, the line and cell it raised on, how
many cases ran before the first failure it chose, why it did not pass (an exception, a
wrong value and a timeout are three different answers), the skip that a timeout in an
earlier hidden check causes, its time, its picture and its diagnosed mistake. So a hidden
check that did not pass is ``failed``, whatever happened, with one fixed message, and every
other field is blank. The total time shown counts visible checks only. Done on the trusted
side, before any renderer runs; staff views skip it."""

from __future__ import annotations

import dataclasses

from grader.records.result import FAILED, PASSED, CheckResult, Result

HIDDEN_NOTE = "hidden check: its inputs and expected values are not shown"
HIDDEN_PASSED = f"passed ({HIDDEN_NOTE})"
HIDDEN_FAILED = f"failed ({HIDDEN_NOTE})"


def hidden_view(check: CheckResult) -> CheckResult:
    """A hidden check as students see it: its task-given fields and whether it passed."""
    passed = check.status == PASSED
    return CheckResult(
        check.name,
        PASSED if passed else FAILED,
        check.score,
        check.max_score,
        message=HIDDEN_PASSED if passed else HIDDEN_FAILED,
        description=check.description,
        function=check.function,
        hidden=True,
    )


def for_students(result: Result) -> Result:
    checks = [hidden_view(c) if c.hidden else c for c in result.checks]
    shown_seconds = sum(c.seconds for c in result.checks if not c.hidden)
    return dataclasses.replace(result, checks=checks, seconds=round(shown_seconds, 3))
