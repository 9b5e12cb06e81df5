"""The words at the seams: a check's status, a sandbox call's status and why a check lost
its points, as ``Literal`` types.

They are Literals of plain strings, not Enums, on purpose: reports are JSON that course
tooling already reads, stored reports are compared with these very strings, and a ``str``
Enum formats differently from one Python version to the next. mypy checks every use.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

# What a check came to (the ``status`` of CheckResult and Result).
CheckStatus = Literal["passed", "failed", "error", "skipped"]
PASSED: Final = "passed"
FAILED: Final = "failed"
ERROR: Final = "error"
SKIPPED: Final = "skipped"

# What one call in the worker came to (CallOutcome.status; the sandbox writes these values).
CallStatus = Literal["ok", "raised", "timeout", "crashed", "malformed", "budget"]
OK: Final = "ok"
RAISED: Final = "raised"
TIMEOUT: Final = "timeout"
CRASHED: Final = "crashed"
MALFORMED: Final = "malformed"
BUDGET: Final = "budget"

# Why a check (or the loads/runs line) did not pass: the ``reason`` of a CheckResult, which
# summaries read instead of its message. A failed call gives its CallStatus (raised,
# timeout, crashed, malformed, budget); the others:
Reason = Literal[
    "raised",
    "timeout",
    "crashed",
    "malformed",
    "budget",
    "mismatch",  # ran, and what it produced is not what the check wants
    "unverified",  # passed, but the evidence cannot be trusted (mutation.py)
    "imports",  # imports or reaches what the task does not allow
    "undefined",  # a function the task asks for is missing
    "unreadable",  # the file was not run: Python could not read it
    "environment",  # the grading machine lacks a package the task allows
    "task",  # the task itself is broken (its reference raised)
    "judge",  # the check tripped over what the code produced
    "ungradable",  # the submission could not be graded at all
    "idle",  # a policy check (how, not what) that counts only when the file does
    # some of the work, and no check of what it computes passed (policy.py)
    "timed-out-before",  # not run: its function timed out before and never finished a call
    "typed-in",  # what it produced is right, but typed into the file, not computed
    # (checks/typed_in.py)
    "final-grading",  # not run in a student kit: it is checked at final grading only
    # (final_grading.py)
]
MISMATCH: Final = "mismatch"
UNVERIFIED: Final = "unverified"
IMPORTS: Final = "imports"
UNDEFINED: Final = "undefined"
UNREADABLE: Final = "unreadable"
ENVIRONMENT: Final = "environment"
TASK: Final = "task"
JUDGE: Final = "judge"
UNGRADABLE: Final = "ungradable"
IDLE: Final = "idle"
TIMED_OUT_BEFORE: Final = "timed-out-before"
TYPED_IN: Final = "typed-in"
FINAL_GRADING: Final = "final-grading"

TIMED_OUT: Final = (TIMEOUT, BUDGET, TIMED_OUT_BEFORE)  # reasons that mean the code ran out of time

CHECK_STATUSES: tuple[str, ...] = get_args(CheckStatus)
CALL_STATUSES: tuple[str, ...] = get_args(CallStatus)
REASONS: tuple[str, ...] = get_args(Reason)


_CALL_REASONS: dict[str, Reason] = {
    RAISED: RAISED,
    TIMEOUT: TIMEOUT,
    CRASHED: CRASHED,
    MALFORMED: MALFORMED,
    BUDGET: BUDGET,
}


def call_reason(status: str) -> Reason:
    """The reason a failed call gives its check (a status no one knows: a malformed answer)."""
    return _CALL_REASONS.get(status, MALFORMED)
