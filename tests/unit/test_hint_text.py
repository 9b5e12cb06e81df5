"""A task's hint for a check follows the message of a failure the code caused, and is
withheld from students with the rest of a hidden check's message."""

import json

from grader.grading.checks import KINDS
from grader.grading.redact import for_students
from grader.grading.run import with_hint
from grader.records.result import ERROR, FAILED, PASSED, SKIPPED, CheckResult, Result
from grader.records.statuses import BUDGET, CRASHED, MISMATCH, RAISED, TASK, TIMEOUT
from grader.report import gradescope, text
from grader.task.check_kind import CheckOptions
from grader.task.spec import CheckSpec

HINT = "build a new array: m / norms, not m /= norms."


def _check(hidden=False, hint=HINT):
    return CheckSpec("untouched", KINDS["mutation"], CheckOptions(), hidden=hidden, hint=hint)


def _failed(hidden=False, reason=MISMATCH, status=FAILED):
    return CheckResult(
        "untouched",
        status,
        0.0,
        1.0,
        message="argument 1 was modified in place.",
        hidden=hidden,
        reason=reason,
    )


def test_a_failure_ends_with_the_tasks_hint():
    assert with_hint(_check(), _failed()).message == f"argument 1 was modified in place. Hint: {HINT}"


def test_no_hint_on_a_call_that_raised_crashed_or_ran_out_of_time():
    """A hint is advice about what the code produced: after a timeout it misleads (a
    float64 hint for a slow float64 table)."""
    for reason in (RAISED, CRASHED, TIMEOUT, BUDGET):
        failed = _failed(reason=reason, status=FAILED if reason != RAISED else ERROR)
        assert with_hint(_check(), failed) == failed


def test_no_hint_where_it_would_not_be_about_the_code():
    for result in (
        CheckResult("untouched", PASSED, 1.0, 1.0),
        CheckResult("untouched", SKIPPED, 0.0, 1.0, message="skipped: needs 'x'"),
        _failed(reason=TASK, status=ERROR),
    ):
        assert with_hint(_check(), result) == result
    assert with_hint(_check(hint=""), _failed()) == _failed()


def test_a_hidden_checks_hint_is_for_staff_only():
    hinted = with_hint(_check(hidden=True), _failed(hidden=True))
    report = Result("t", "s.py", 0.0, 1.0, FAILED, "bubblewrap", [hinted])
    assert HINT in text.render(report)  # the staff view
    assert HINT not in text.render(for_students(report))
    assert HINT not in json.dumps(json.loads(gradescope.render(for_students(report))))
