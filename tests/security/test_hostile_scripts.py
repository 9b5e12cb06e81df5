"""Hostile scripts against the recording of what a script computed (sandbox/inside/computed.py):
a script that prints the right answer without computing it, that pokes the recorder, names
its own functions like it, or installs its own profile and trace hooks gains nothing it did
not compute (at worst it loses the checks that look at its work); a script that makes a
great many arrays stays within the worker's memory and the answer's caps."""

import os
import textwrap

import numpy as np
from helpers.paths import ROOT

from grader.authoring import load_task
from grader.grading.prepared import PreparedTask
from grader.grading.run import GradeOptions, grade
from grader.sandbox import Sandbox, choose_tier

TASKS = os.path.join(ROOT, "tasks")

# A correct table, built in a helper and used inline only (no variable holds it).
HELPER = """
import numpy as np

def pe(length, depth):
    p = np.arange(length)[:, None]
    j = np.arange(depth)[None, :]
    angles = p / np.power(10000.0, (2 * (j // 2)) / depth)
    return np.where(j % 2 == 0, np.sin(angles), np.cos(angles))
"""


def _checks(tmp_path, source, task="pe-table-shape"):
    path = tmp_path / "attack.py"
    path.write_text(source)
    result = grade(load_task(os.path.join(TASKS, task)), str(path))
    return {c.name: c for c in result.checks}


def test_poking_the_recorder_gains_nothing_not_computed(tmp_path):
    """Hands the recorder typed-in values and wrong sites, names its own functions like the
    recorder's, then replaces its arithmetic recorder and switches any hook off."""
    checks = _checks(
        tmp_path,
        textwrap.dedent("""
        import sys
        import numpy as np

        def call(site, owner, value):
            return value
        record = arith = call

        recorder = globals()["<call>"]
        for site in [-1, 0, 1, 2, 3, 10 ** 9, "x", None]:
            recorder(site, None, [[0.5] * 8] * 5)   # (site, the name the call starts from, value)
        globals()["<locals>"] = lambda: {"table": np.ones((5, 8))}
        globals()["<arith>"] = lambda site, a, b: a
        sys.setprofile(lambda *args: None)
        sys.settrace(None)
        typed_in = np.zeros((5, 8)) + 1
        print((5, 8))
    """),
    )
    assert checks["runs"].status == "passed", checks["runs"].message
    assert checks["prints-the-shape"].status == "passed"
    assert checks["builds-the-table"].status == "failed"
    assert "has the table's shape (5, 8) but not its values" in checks["builds-the-table"].message
    assert checks["allowed-imports"].status == "failed"
    assert "globals" in checks["allowed-imports"].message


def test_a_script_cannot_switch_the_recording_off(tmp_path):
    """Its own profile and trace hooks (and none) change nothing of what is recorded: the
    table it computed inline still counts; the hooks are evidence against its imports."""
    checks = _checks(
        tmp_path,
        HELPER
        + textwrap.dedent("""
        import sys
        sys.setprofile(lambda frame, event, arg: None)
        sys.settrace(lambda frame, event, arg: None)
        sys.setprofile(None)
        print("Shape of table is", pe(5, 8).shape)
    """),
    )
    assert checks["builds-the-table"].status == "passed", checks["builds-the-table"].message
    assert checks["prints-the-shape"].status == "passed"
    message = checks["allowed-imports"].message
    assert checks["allowed-imports"].status == "failed" and "sys (line" in message
    assert "sys.setprofile() (called while running)" in message


def test_the_recorder_does_not_hide_what_an_operator_reaches(tmp_path):
    """An operator whose method is a C function that reaches other code (gc) runs inside the
    recorder's frame now; the worker still sees the script doing it."""
    checks = _checks(
        tmp_path,
        HELPER
        + textwrap.dedent("""
        import functools
        import gc

        class Reaching:
            __add__ = functools.partial(gc.get_referrers)

        Reaching() + 1
        print(pe(5, 8).shape)
    """),
    )
    assert checks["builds-the-table"].status == "passed", checks["builds-the-table"].message
    assert "gc.get_referrers() (called while running)" in checks["allowed-imports"].message


MANY_ARRAYS = (
    """
import numpy as np

def kept_in_a_local():
    pieces = [np.full(64, i) for i in range(20000)]
    return len(pieces)

for i in range(100000):
    a = np.full(16, i) * 2
kept_in_a_local()
"""
    + "".join(f"b{i} = np.full(1 << 15, {i}.0) - 1\n" for i in range(300))
    + """
huge = np.ones(1 << 26) + 1
print((1, 3, 6))
"""
)


def test_a_great_many_arrays_stay_within_the_caps(tmp_path):
    """One site in a long loop, a local list of 20000 arrays, 300 sites of 256 KiB each and a
    512 MiB array: the worker keeps the last value per site, skips what cannot be sent, and
    answers within the answer's caps (count and bytes)."""
    task = load_task(os.path.join(TASKS, "pe-batch-sum"))
    cap = PreparedTask.of(task).answer_bytes()
    path = tmp_path / "many.py"
    path.write_text(MANY_ARRAYS)
    with Sandbox(str(path), [], task.limits, choose_tier("auto", False), answer_bytes=cap) as box:
        outcome = box.run_script()
    assert outcome.status == "ok", outcome.error
    arrays = outcome.value["arrays"]
    assert 64 < len(arrays) <= 64 + 128
    assert sum(np.asarray(a).nbytes for a, *_ in arrays.values()) <= cap
    assert not any(np.asarray(a).nbytes > cap for a, *_ in arrays.values())
    checks = {c.name: c for c in grade(task, str(path), GradeOptions()).checks}
    assert checks["runs"].status == "passed" and checks["prints-the-shape"].status == "passed"
    assert checks["adds-the-first-three-rows"].status == "failed"
