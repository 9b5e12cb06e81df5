"""The worker boundary: limits from the trusted side, restarts, captured output, and a
cleared environment. (The full adversarial suite is its own issue.)"""

import os
import time

import numpy as np
import pytest
from helpers.paths import PE_TASK, ROOT
from helpers.tasks import write
from helpers.tiers import BUBBLEWRAP, RLIMITS, runtime_mount_points_in_tmp, tier_works

from grader.grading.run import GradeOptions, grade
from grader.records.limits import Limits
from grader.sandbox import warm
from grader.sandbox.launcher import Sandbox

HOSTILE = """
import os, sys, time
import numpy as np
print("hello from import")

def spin():
    while True:
        pass

def leave():
    os._exit(3)

def leave_politely():
    sys.exit(0)

def shout():
    print("x" * 10_000_000)
    return 1

def env(name):
    return os.environ.get(name, "")

def double(x):
    return x * 2

def raise_error():
    raise ValueError("nope")

def lying_object():
    class Liar:
        def __eq__(self, other):
            return True
    return Liar()

def huge_view():
    return np.broadcast_to(np.zeros(1), (10**10,))
"""


# Each tier with a fresh worker per submission, and (where they work) with warm workers:
# ``tier`` is parametrized by conftest.
@pytest.fixture
def sandbox(request, tmp_path, tier):
    warm_workers = tier.warm
    path = write(tmp_path / "hostile.py", HOSTILE)
    limits = Limits(call_seconds=1.0, submission_seconds=30)
    if warm_workers:
        slot = warm.Slot(limits, tier)
        request.addfinalizer(slot.close)
        box = Sandbox(path, ["double"], limits, tier, slot.spawn)
    else:
        box = Sandbox(path, ["double"], limits, tier)
    yield box
    box.close()


def test_load_reports_output_and_functions(sandbox):
    outcome = sandbox.load()
    assert outcome.status == "ok"
    assert outcome.stdout == "hello from import\n"
    assert outcome.value["functions"]["double"]["params"] == ["x"]


def test_endless_loop_times_out_and_grading_goes_on(sandbox):
    start = time.monotonic()
    assert sandbox.call("spin", []).status == "timeout"
    # The status is the proof; the bound only says "cut off, not hung", with room for a busy
    # machine (the limit is 1 s).
    assert time.monotonic() - start < 30
    outcome = sandbox.call("double", [np.arange(3.0)])
    assert outcome.status == "ok"
    np.testing.assert_array_equal(outcome.value, [0.0, 2.0, 4.0])
    assert sandbox.restarts == 1


def test_exit_in_a_call_is_a_crash_and_the_worker_is_replaced(sandbox):
    outcome = sandbox.call("leave", [])
    assert outcome.status == "crashed" and "exited with status 3" in outcome.error.message
    raised = sandbox.call("leave_politely", [])
    assert raised.status == "raised" and raised.error.type == "SystemExit"
    assert sandbox.call("double", [2]).value == 4


def test_output_is_captured_with_a_cap(sandbox):
    outcome = sandbox.call("shout", [])
    assert outcome.status == "ok" and outcome.value == 1
    assert len(outcome.stdout) < 10_000
    assert "bytes not shown" in outcome.stdout
    assert outcome.stdout.rstrip().endswith("x")  # the tail is kept too


def test_grader_environment_does_not_reach_the_worker(sandbox, monkeypatch):
    monkeypatch.setenv("GRADER_TEST_SECRET", "hunter2")
    assert sandbox.call("env", ["GRADER_TEST_SECRET"]).value == ""
    assert sandbox.call("env", ["OPENBLAS_NUM_THREADS"]).value == "1"


def test_exceptions_and_objects_come_back_as_descriptions(sandbox):
    raised = sandbox.call("raise_error", [])
    assert raised.status == "raised" and raised.error.message == "nope"
    liar = sandbox.call("lying_object", [])
    assert liar.status == "ok" and type(liar.value).__name__ == "Opaque"
    view = sandbox.call("huge_view", [])
    assert view.status == "ok" and "too large" in repr(view.value)


def test_submission_budget_stops_a_slow_submission(tmp_path):
    path = write(tmp_path / "slow.py", HOSTILE)
    with Sandbox(path, [], Limits(call_seconds=0.5, submission_seconds=1.2), RLIMITS) as box:
        assert box.load().status == "ok"
        box.start_budget()  # as grading does: starting the worker is not the student's time
        statuses = [box.call("spin", []).status for _ in range(4)]
    # How many calls fit in the budget depends on how fast replacement workers start (a
    # busy machine fits fewer), so: the first call has its own limit, the budget runs out
    # within three calls of 0.5 s, and once out it stays out.
    assert statuses[0] == "timeout"
    assert set(statuses) == {"timeout", "budget"}
    assert statuses == sorted(statuses, key=["timeout", "budget"].index)
    assert statuses[-1] == "budget"


def test_import_that_never_ends_is_an_error_not_a_hang(pe_task, tmp_path):
    path = write(tmp_path / "loop.py", "while True:\n    pass\n")
    start = time.monotonic()
    result = grade(pe_task, path, GradeOptions(limits={"call_seconds": 1.0}))
    assert time.monotonic() - start < 60  # not a hang; generous for a busy machine
    assert result.status == "error"
    assert "endless loop" in result.checks[0].message


def test_exit_at_import_is_an_error(pe_task, tmp_path):
    path = write(tmp_path / "quit.py", "import os\nos._exit(0)\n")
    result = grade(pe_task, path)
    assert result.status == "error" and "exited with status 0" in result.checks[0].message


def test_worker_never_sees_expected_values(pe_task, tmp_path):
    """A submission that searches its own process for the answer finds nothing to copy."""
    path = write(
        tmp_path / "snoop.py",
        """
        import gc
        import numpy as np

        def sinusoidal_pe(max_len, d_model, base=10000.0):
            for obj in gc.get_objects():
                if isinstance(obj, np.ndarray) and obj.shape == (max_len, d_model):
                    return obj.copy()
            return np.full((max_len, d_model), 7.0)

        def add_positional_encoding(x, base=10000.0):
            return x
    """,
    )
    result = grade(pe_task, path)
    by_name = {c.name: c for c in result.checks}
    assert by_name["exponent-2i-over-d"].status == "failed"
    assert by_name["example-table-3x4"].status == "failed"


def test_printed_full_score_is_only_shown(pe_task, tmp_path):
    path = write(
        tmp_path / "fake.py",
        """
        import json
        print(json.dumps({"score": 33, "max_score": 33, "status": "passed"}))
        print("Score: 33/33 (100%)  passed")
    """,
    )
    result = grade(pe_task, path)
    assert result.score < 3 and result.status != "passed"
    assert "Score: 33/33" in result.output


@pytest.mark.skipif(not tier_works(BUBBLEWRAP), reason="bubblewrap does not work here")
def test_bubblewrap_worker_sees_only_the_submission(tmp_path):
    secret = tmp_path / "other_student.py"
    secret.write_text("SECRET = 1\n")
    path = write(
        tmp_path / "look.py",
        """
        import os
        def look(p):
            return os.path.exists(p)
        def listing():
            return sorted(os.listdir(os.path.dirname(__file__)))
    """,
    )
    with Sandbox(path, [], Limits(), BUBBLEWRAP) as box:
        assert box.call("look", [str(secret)]).value is False
        assert box.call("look", [PE_TASK]).value is False
        assert box.call("look", [os.path.join(ROOT, "pyproject.toml")]).value is False
        seen = [n for n in box.call("listing", []).value if n not in runtime_mount_points_in_tmp()]
        assert seen == ["submission.py"]  # its private copy, alone (beside the runtime)
