"""example checks (grading/checks/examples.py) judged against a fake sandbox
(tests/helpers/fake_sandbox.py): no worker, the "student's" function runs here.

One module per kind, named after the kind's module: tests/unit/test_checks_<module>.py.
"""

import pytest
from helpers.fake_sandbox import budget_spent, context, crashed, run_check, timed_out
from helpers.tasks import make_task

from grader.authoring import load_task
from grader.grading.prepared import prepare
from grader.records.statuses import BUDGET, CRASHED, ERROR, FAILED, MISMATCH, PASSED, RAISED, TIMEOUT

TASK = """
id: scaling
title: Scaling
version: 1
functions:
  scale: [x, k]
checks:
  - name: scale-by-two
    kind: example
    call: scale
    args: {x: {array: {value: [1.5, -2.0, 4.0]}}, k: 2}
    points: 2
  - name: literal-expect
    kind: example
    call: scale
    args: {x: {array: {value: [1.0, -1.0]}}, k: 3}
    expect: [3.0, -3.0]
  - name: three-sizes
    kind: example
    call: scale
    cases:
      - {x: {array: {fill: 1.0, shape: [6]}}, k: 2}
      - {x: {array: {fill: 1.0, shape: [2]}}, k: 2}
      - {x: {array: {fill: 1.0, shape: [4]}}, k: 2}
  - name: result-shape
    kind: example
    call: scale
    compare: shape
    args: {x: {array: {fill: 1.0, shape: [2, 3]}}, k: 2}
"""

REFERENCE = """
import numpy as np

def scale(x, k):
    return np.asarray(x, dtype=float) * k
"""


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    return prepare(
        load_task(make_task(tmp_path_factory.mktemp("t") / "task", TASK, REFERENCE)), use_cache=False
    )


def judge(prepared, name, scale):
    ctx = context(prepared, {"scale": scale})
    return run_check(ctx, name), ctx


def right(x, k):
    return x * k


def test_a_right_answer_passes_with_its_points(prepared):
    result, ctx = judge(prepared, "scale-by-two", right)
    assert (result.status, result.score, result.max_score, result.cases) == (PASSED, 2.0, 2.0, 1)
    assert ctx.sandbox.made[0][0] == "scale"  # (one call, of the function the check names)


def test_a_wrong_value_fails_naming_the_call_and_expected_against_got(prepared):
    result, _ = judge(prepared, "scale-by-two", lambda x, k: x + k)
    assert (result.status, result.score, result.reason) == (FAILED, 0.0, MISMATCH)
    assert result.failing_input == "scale(x=np.array([1.5, -2.0, 4.0]), k=2)"
    assert "at [0] expected 3, got 3.5" in result.message


def test_a_literal_expect_is_what_the_answer_is_compared_with(prepared):
    assert judge(prepared, "literal-expect", right)[0].status == PASSED
    result, _ = judge(prepared, "literal-expect", lambda x, k: x * 2)
    assert result.status == FAILED and "expected 3, got 2" in result.message


def test_of_the_failing_cases_the_smallest_is_shown(prepared):
    # wrong from 3 elements on: of the cases 6, 2 and 4 long, the 4 is shown (sent
    # smallest first, so the first failure is the smallest)
    result, ctx = judge(prepared, "three-sizes", lambda x, k: x * k if len(x) < 3 else x)
    assert result.status == FAILED and result.failing_input == "scale(x=np.full((4,), 1.0), k=2)"
    assert "expected 2, got 1" in result.message
    assert [len(args[0]) for _f, args, _kw in ctx.sandbox.made] == [2, 4]  # stopped at it
    assert ctx.sandbox.outside == 0  # an example is never shrunk


def test_a_raise_is_the_students_error_with_its_line(prepared):
    def raising(x, k):
        return {}[k]

    result, _ = judge(prepared, "scale-by-two", raising)
    assert (result.status, result.reason) == (FAILED, RAISED)
    assert result.message.startswith("raised KeyError: 2 (line ")
    assert "in raising: return {}[k]" in result.message
    assert result.line == raising.__code__.co_firstlineno + 1


def test_what_the_function_printed_is_shown_with_its_failure(prepared):
    def chatty(x, k):
        print("scaling by", k)
        return x

    result, _ = judge(prepared, "scale-by-two", chatty)
    assert result.status == FAILED and result.output == "scaling by 2"


@pytest.mark.parametrize(
    "outcome, status, reason, said",
    [
        (timed_out, FAILED, TIMEOUT, "the call timed out"),
        (crashed, FAILED, CRASHED, "the call the worker process was killed"),
        (budget_spent, ERROR, BUDGET, "used up its 60 s time budget"),
    ],
)
def test_a_call_with_no_answer_says_why(prepared, outcome, status, reason, said):
    result, _ = judge(prepared, "scale-by-two", lambda x, k: outcome())
    assert (result.status, result.reason, result.score) == (status, reason, 0.0)
    assert said in result.message


def test_a_shape_check_fails_a_wrong_shape_and_passes_wrong_values(prepared):
    assert judge(prepared, "result-shape", lambda x, k: x * 0)[0].status == PASSED
    result, _ = judge(prepared, "result-shape", lambda x, k: x.T * k)
    assert result.status == FAILED and "shape" in result.message and "(2, 3)" in result.message
