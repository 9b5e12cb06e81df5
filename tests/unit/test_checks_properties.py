"""property checks (grading/checks/properties.py) judged against a fake sandbox
(tests/helpers/fake_sandbox.py): Hypothesis's cases sent to a "student's" function run
here, and a failure shrunk to the smallest failing input.

One module per kind, named after the kind's module: tests/unit/test_checks_<module>.py.
"""

import numpy as np
import pytest
from helpers.fake_sandbox import context, crashed, run_check, timed_out
from helpers.tasks import make_task

from grader.authoring import load_task
from grader.grading.checks.case_runs import shrunk
from grader.grading.prepared import prepare
from grader.records.statuses import CRASHED, FAILED, MISMATCH, PASSED, RAISED, TIMEOUT

TASK = """
id: doubling
title: Doubling
version: 1
functions:
  double: [x]
checks:
  - name: doubles
    kind: property
    call: double
    args:
      x: {array: {shape: [{integers: {min: 1, max: 20}}], elements: {min: -100, max: 100}}}
    edge_cases:
      - {x: {array: {fill: 1.0, shape: [12]}}}
    cases: 8
    points: 2
  - name: returns-float-array
    kind: property
    call: double
    compare: type
    returns: {class: ndarray, dtype: floating}
    args:
      x: {array: {shape: [{integers: {min: 1, max: 20}}]}}
    cases: 4
"""

REFERENCE = """
import numpy as np

def double(x):
    return np.asarray(x, dtype=float) * 2
"""

CASES = 9  # its 8 drawn cases and its edge case


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    return prepare(
        load_task(make_task(tmp_path_factory.mktemp("t") / "task", TASK, REFERENCE)), use_cache=False
    )


def judge(prepared, double, name="doubles"):
    ctx = context(prepared, {"double": double})
    return run_check(ctx, name), ctx


def test_a_right_answer_passes_every_case_with_its_points(prepared):
    result, ctx = judge(prepared, lambda x: x * 2)
    assert (result.status, result.score, result.cases) == (PASSED, 2.0, CASES)
    assert len(ctx.sandbox.made) == CASES and ctx.sandbox.outside == 0  # nothing to shrink


def test_a_wrong_value_is_shown_on_the_smallest_input_that_fails(prepared):
    # wrong from 3 elements on: the case set's smallest such case is 6 long, the shrink
    # (outside the budget) finds 3 zeros
    result, ctx = judge(prepared, lambda x: x * 2 if len(x) < 3 else x * 2 + 1)
    assert (result.status, result.score, result.reason) == (FAILED, 0.0, MISMATCH)
    assert result.failing_input == "double(x=np.full((3,), 0.0))"
    assert "at [0] expected 0, got 1" in result.message
    assert ctx.sandbox.outside > 0


def test_a_visible_checks_shrink_waits_and_then_shows_the_smaller_input(prepared):
    ctx = context(prepared, {"double": lambda x: x * 2 if len(x) < 3 else x * 2 + 1})
    ctx.shrinks_later = []  # (run.py: the other visible checks run first)
    result = run_check(ctx, "doubles")
    assert result.status == FAILED and result.failing_input.count(",") == 5  # the set's case: 6 long
    assert ctx.sandbox.outside == 0 and len(ctx.shrinks_later) == 1
    assert shrunk(ctx, ctx.shrinks_later[0]).failing_input == "double(x=np.full((3,), 0.0))"


def test_a_failing_edge_case_is_shown_as_the_task_writes_it_when_no_draw_fails(prepared):
    # wrong only on ones: the edge case (12 ones) fails; Hypothesis draws no such input
    result, ctx = judge(prepared, lambda x: x * 2 if not np.all(x == 1) else x)
    assert result.status == FAILED and result.failing_input == "double(x=np.full((12,), 1.0))"
    assert "expected 2, got 1" in result.message
    assert ctx.sandbox.outside > 0  # (it looked)


def test_a_raise_is_the_students_error_on_the_smallest_input_that_raises(prepared):
    def double(x):
        if len(x) >= 4:
            raise ValueError("too long")
        return x * 2

    result, _ = judge(prepared, double)
    assert (result.status, result.reason) == (FAILED, RAISED)
    assert result.failing_input == "double(x=np.full((4,), 0.0))"
    assert result.message.startswith("raised ValueError: too long (line ")
    assert result.line == double.__code__.co_firstlineno + 2


@pytest.mark.parametrize("outcome, reason", [(timed_out, TIMEOUT), (crashed, CRASHED)])
def test_a_call_with_no_answer_is_said_so_and_not_shrunk(prepared, outcome, reason):
    result, ctx = judge(prepared, lambda x: outcome())
    assert (result.status, result.reason, result.score) == (FAILED, reason, 0.0)
    assert result.message.startswith("the call ")
    assert result.failing_input == "double(x=np.full((1,), 0.0))"  # the set's smallest
    assert len(ctx.sandbox.made) == 1 and ctx.sandbox.outside == 0


def test_a_type_check_fails_a_list_naming_what_it_must_be(prepared):
    assert judge(prepared, lambda x: x * 0, "returns-float-array")[0].status == PASSED
    result, _ = judge(prepared, lambda x: list(x * 2), "returns-float-array")
    assert result.status == FAILED and result.reason == MISMATCH
    assert "returned a list" in result.message and "np.ndarray" in result.message
