"""mutation checks (grading/checks/mutation.py) judged against a fake sandbox
(tests/helpers/fake_sandbox.py): the arguments after each call are the copies the
"student's" function got, as it left them (what the grader reads back from shared memory).

One module per kind, named after the kind's module: tests/unit/test_checks_<module>.py.
"""

import pytest
from helpers.fake_sandbox import context, crashed, run_check, timed_out
from helpers.tasks import make_task

from grader.authoring import load_task
from grader.grading.prepared import prepare
from grader.records.statuses import FAILED, MISMATCH, PASSED, SKIPPED, TIMEOUT, UNVERIFIED

TASK = """
id: centring
title: Centring
version: 1
functions:
  centre: [x]
checks:
  - name: leaves-x-unchanged
    kind: mutation
    call: centre
    args:
      x: {array: {shape: [{integers: {min: 1, max: 6}}, 3], elements: {min: 1, max: 100}}}
    cases: 5
    points: 2
"""

REFERENCE = """
import numpy as np

def centre(x):
    return x - x.mean(axis=0)
"""

SOURCE = "import numpy as np\n\ndef centre(x):\n    return x - x.mean(axis=0)\n"


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    return prepare(
        load_task(make_task(tmp_path_factory.mktemp("t") / "task", TASK, REFERENCE)), use_cache=False
    )


def judge(prepared, centre, source=SOURCE, evidence=()):
    ctx = context(prepared, {"centre": centre}, source, evidence)
    return run_check(ctx, "leaves-x-unchanged"), ctx


def right(x):
    return x - x.mean(axis=0)


def in_place(x):
    x -= x.mean(axis=0)
    return x


def test_a_new_array_leaving_the_input_alone_passes_with_its_points(prepared):
    result, ctx = judge(prepared, right)
    assert (result.status, result.score, result.cases) == (PASSED, 2.0, 5)
    assert all(kw == {} and len(args) == 1 for _f, args, kw in ctx.sandbox.made)


def test_an_argument_changed_in_place_fails_saying_where_and_how(prepared):
    result, _ = judge(prepared, in_place)
    assert (result.status, result.score, result.reason) == (FAILED, 0.0, MISMATCH)
    assert "your function changed its argument `x` in place: at [0, 0] it was" in result.message
    assert "Leave `x` as it is and return a new array." in result.message
    assert result.failing_input.startswith("centre(x=")


def test_returning_the_input_itself_fails_though_it_is_unchanged(prepared):
    result, _ = judge(prepared, lambda x: x)
    assert result.status == FAILED and "returned its argument `x` itself (or a view of it)" in result.message
    assert judge(prepared, lambda x: x[:, :2])[0].status == FAILED  # a view of it


def test_a_raise_is_no_mutation_but_a_raise_after_one_is_named_with_it(prepared):
    def raises(x):
        raise ValueError("no")

    def changes_then_raises(x):
        x[0, 0] = 0
        raise ValueError("no")

    assert judge(prepared, raises)[0].status == PASSED  # (what it returns is other checks' concern)
    result, _ = judge(prepared, changes_then_raises)
    assert result.status == FAILED and "in place" in result.message
    assert "(The call then raised ValueError: no" in result.message


def test_a_function_that_never_finishes_a_call_is_not_judged_and_costs_one_timeout(prepared):
    result, ctx = judge(prepared, lambda x: timed_out())
    assert (result.status, result.reason, result.score) == (SKIPPED, TIMEOUT, 0.0)
    assert "none of its 5 cases could be judged" in result.message and "timed out" in result.message
    assert len(ctx.sandbox.made) == 1  # stalled: the rest are not sent


def test_the_cases_left_out_are_said_and_the_others_judged(prepared):
    made = []

    def crashes_once(x):
        made.append(x)
        return crashed() if len(made) == 1 else right(x)

    result, _ = judge(prepared, crashes_once)
    assert (result.status, result.score, result.cases) == (PASSED, 2.0, 4)
    assert "passed on the 4 of its 5 cases that could be judged; 1 left out" in result.message
    assert "a call that crashed" in result.message


@pytest.mark.parametrize(
    "source, evidence, named",
    [
        ("import inspect\n" + SOURCE, (), "inspect (line 1)"),
        (SOURCE, ("gc",), "gc (imported while running)"),
    ],
)
def test_a_file_that_can_reach_the_harness_gets_no_credit(prepared, source, evidence, named):
    result, _ = judge(prepared, right, source, evidence)
    assert (result.status, result.reason, result.score) == (FAILED, UNVERIFIED, 0.0)
    assert result.message.startswith("not verified: the file can reach the grader's code")
    assert named in result.message
