"""The mutation check judges what it can observe (issue 35): the argument after every call
that returned *or raised*. A raise is no mutation (it costs the checks that needed the
result); a call of which nothing can be told (it timed out or crashed: the argument's state
after it is unknown) is left out; a check with no case left is skipped, with why.

The attacks: a call that writes into ``x`` and then raises still fails the check (the
leniency hides no fault), and a call that writes and then sleeps past its limit is left
out, but the write shows on the cases that finish. Every sandboxed tier (each writes the
argument back into the grader's memory after a raise too), and the unsandboxed one, whose
worker sends the argument back after a raise as after a return.
"""

import json

import numpy as np
import pytest
from helpers.cli import run_cli
from helpers.tasks import make_task, write
from helpers.tiers import UNSANDBOXED

from grader.records.limits import Limits
from grader.sandbox.launcher import Sandbox

MUTATION = "leaves-x-alone"

# Six 1-D cases drawn and two batches (shape (k, 3)), the largest, sent last.
TASK = """
id: add-one
title: Add one
version: 1
functions:
  add_one: [x]
limits:
  call_limit: absolute
  call_seconds: 1
checks:
  - name: values
    kind: example
    call: add_one
    args: {x: {array: {value: [1.0, 2.0, 3.0]}}}
  - name: leaves-x-alone
    kind: mutation
    call: add_one
    args: {x: {array: {shape: [3], elements: {min: -10, max: 10}}}}
    edge_cases:
      - {x: {array: {fill: 1.0, shape: [4, 3]}}}
      - {x: {array: {fill: 2.0, shape: [5, 3]}}}
    cases: 6
"""

REFERENCE = """
import numpy as np

def add_one(x):
    return np.asarray(x, dtype=float) + 1
"""

RAISES_ON_A_BATCH = """
def add_one(x):
    if x.ndim > 1:
        raise ValueError("add_one handles a 1-D x only")
    return x + 1
"""

# The attack: hides a write behind the raise.
WRITES_THEN_RAISES = """
def add_one(x):
    if x.ndim > 1:
        x += 1
        raise ValueError("add_one handles a 1-D x only")
    return x + 1
"""

SLOW_ON_A_BATCH = """
import time

def add_one(x):
    if x.ndim > 1:
        time.sleep(30)
    return x + 1
"""

# The attack: writes, then sleeps past the limit on a batch (left out), but it writes on
# every call, and the calls that finish show it.
WRITES_THEN_SLEEPS = """
import time

def add_one(x):
    x += 1
    if x.ndim > 1:
        time.sleep(30)
    return x
"""

# Finishes only the example check's call; every mutation case times out (the check stops
# after MAX_LEFT_OUT + 1 of them: each costs a limit of the submission's budget).
SLOW_BUT_ON_THE_EXAMPLE = """
import time

def add_one(x):
    if x.tolist() != [1.0, 2.0, 3.0]:
        time.sleep(30)
    return x + 1
"""


def _graded(tmp_path, tier, source):
    task = make_task(tmp_path / "task", TASK, REFERENCE)
    path = write(tmp_path / "submission.py", source)
    done = run_cli("check", task, path, "--format", "json", "--isolation", tier, timeout=180)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["isolation"] == tier
    return report, {c["name"]: c for c in report["checks"]}


def test_a_call_that_raises_without_writing_x_is_no_mutation(tmp_path, plain_tier):
    report, checks = _graded(tmp_path, plain_tier, RAISES_ON_A_BATCH)
    assert checks["values"]["status"] == "passed"
    assert checks[MUTATION]["status"] == "passed", checks[MUTATION]["message"]
    assert checks[MUTATION]["cases"] == 8
    assert report["score"] == report["max_score"]


def test_a_call_that_writes_x_and_then_raises_still_fails(tmp_path, plain_tier):
    _, checks = _graded(tmp_path, plain_tier, WRITES_THEN_RAISES)
    mutation = checks[MUTATION]
    assert mutation["status"] == "failed" and mutation["score"] == 0
    assert mutation["reason"] == "mismatch"
    assert "changed its argument `x` in place" in mutation["message"]
    assert "then raised ValueError" in mutation["message"]


def test_a_call_that_times_out_is_left_out(tmp_path, plain_tier):
    report, checks = _graded(tmp_path, plain_tier, SLOW_ON_A_BATCH)
    mutation = checks[MUTATION]
    assert mutation["status"] == "passed", mutation["message"]
    assert mutation["cases"] == 6
    assert "2 left out" in mutation["message"] and "timed out" in mutation["message"]
    assert report["score"] == report["max_score"]


def test_a_write_before_a_timeout_shows_on_the_calls_that_finish(tmp_path, plain_tier):
    _, checks = _graded(tmp_path, plain_tier, WRITES_THEN_SLEEPS)
    mutation = checks[MUTATION]
    assert mutation["status"] == "failed" and mutation["reason"] == "mismatch"
    assert "changed its argument `x` in place" in mutation["message"]


def test_a_check_no_case_of_which_can_be_judged_is_skipped_with_why(tmp_path, plain_tier):
    _, checks = _graded(tmp_path, plain_tier, SLOW_BUT_ON_THE_EXAMPLE)
    mutation = checks[MUTATION]
    assert mutation["status"] == "skipped" and mutation["score"] == 0
    assert mutation["reason"] == "timeout"
    assert "none of its 8 cases could be judged" in mutation["message"]
    assert "timed out" in mutation["message"]


BUMPS_THEN_RAISES = """
import numpy as np

def bump(x, y):
    x += 1
    if y.sum() > 0:
        raise ValueError("after the write")
    return y * 2
"""


@pytest.mark.parametrize("where", ["sandboxed", UNSANDBOXED])
def test_the_arguments_after_a_raise_are_read_back(tmp_path, plain_tier, where):
    """After a raise as after a return, the grader has the arguments as the call left them:
    from its own memory (sandboxed tiers), or as the worker sends them back (unsandboxed)."""
    if where == UNSANDBOXED and plain_tier != "rlimits":
        pytest.skip("the unsandboxed tier is one tier: run once")
    tier = UNSANDBOXED if where == UNSANDBOXED else plain_tier
    path = write(tmp_path / "bump.py", BUMPS_THEN_RAISES)
    with Sandbox(path, ["bump"], Limits(call_seconds=5.0, submission_seconds=60), tier) as sandbox:
        assert sandbox.load().status == "ok"
        items = [([np.full(3, float(n)), np.full(2, float(n % 2))], {}) for n in range(6)]
        outcomes = list(sandbox.calls("bump", items, return_inputs=True))
        assert [o.status for o in outcomes] == ["ok", "raised"] * 3
        for (args, _), outcome in zip(items, outcomes):
            x, y = outcome.inputs_after
            assert np.array_equal(x, args[0] + 1), "the write before the raise was not seen"
            assert np.array_equal(y, args[1])
