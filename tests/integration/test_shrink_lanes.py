"""One file's shrinks in two lanes (`grader check`: grading/shrinking/lanes.py): a forked grader with a
worker of its own shrinks some failures while this process shrinks the rest. The report is
the one a single lane gives; a lane that reports nothing only costs time; what its worker
saw the submission do is weighed as the first worker's is; nothing of it outlives the grade."""

import os

import pytest
from helpers.paths import PE_SAMPLES, PE_TASK
from helpers.tasks import write

from grader.authoring import load_task
from grader.grading.run import GradeOptions, grade
from grader.grading.shrinking import lanes as shrink_lanes
from grader.sandbox.launcher import Sandbox

TRANSPOSED = """
import numpy as np


def sinusoidal_pe(max_len, d_model, base=10000.0):
    positions = np.arange(max_len, dtype=np.float64)[:, None]
    pairs = np.arange(d_model // 2, dtype=np.float64)
    angles = positions / np.power(float(base), 2.0 * pairs / d_model)
    table = np.zeros((max_len, d_model))
    table[:, 0:2 * len(pairs):2] = np.sin(angles)
    table[:, 1:2 * len(pairs):2] = np.cos(angles)
    return table.T


def add_positional_encoding(x, base=10000.0):
    return x + sinusoidal_pe(x.shape[-2], x.shape[-1], base)
"""


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    """No shrink paths from an earlier grade: every failure is shrunk by Hypothesis."""
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "cache"))


def _feedback(result):
    return [(c.name, c.status, c.score, c.message, c.failing_input) for c in result.checks]


def _graded(task, path, lanes, tier=None):
    options = GradeOptions(shrink_lanes=lanes, **({"isolation": tier} if tier else {}))
    return grade(task, path, options)


@pytest.mark.parametrize(
    "sample", ["mistake_sin_cos_swapped.py", "mistake_exponent_missing_two.py", "transposed"]
)
def test_the_report_is_the_one_a_single_lane_gives(sample, tmp_path, plain_tier, monkeypatch):
    path = (
        write(tmp_path / "s.py", TRANSPOSED) if sample == "transposed" else os.path.join(PE_SAMPLES, sample)
    )
    task = load_task(PE_TASK)
    lanes_used = []
    both_ways = shrink_lanes.shrink_both_ways

    def counted(ctx, waiting):
        lanes_used.append(len(waiting))
        return both_ways(ctx, waiting)

    monkeypatch.setattr("grader.grading.run.shrink_both_ways", counted)
    alone = _graded(task, path, lanes=False, tier=plain_tier)
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "another-cache"))
    two = _graded(task, path, lanes=True, tier=plain_tier)
    assert lanes_used and max(lanes_used) >= shrink_lanes.MIN_FAILURES  # (two lanes did run)
    assert _feedback(two) == _feedback(alone)
    assert two.diagnoses == alone.diagnoses and two.score == alone.score


def test_a_lane_that_reports_nothing_only_costs_time(tmp_path, monkeypatch):
    task = load_task(PE_TASK)
    path = write(tmp_path / "s.py", TRANSPOSED)
    alone = _graded(task, path, lanes=False)
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "another-cache"))
    monkeypatch.setattr(shrink_lanes, "_lane", lambda *args: os._exit(3))  # (the lane dies at once)
    two = _graded(task, path, lanes=True)
    assert _feedback(two) == _feedback(alone)


def test_what_the_lanes_worker_saw_is_weighed_by_the_imports_check(tmp_path, monkeypatch):
    """Evidence the lane's worker sent (here: an import of json) comes back with its shrinks,
    before the imports check runs."""
    twin = Sandbox.twin

    def seen_importing(self):
        other = twin(self)
        other.evidence.append("json")
        return other

    monkeypatch.setattr(Sandbox, "twin", seen_importing)  # (the fork inherits it)
    task = load_task(PE_TASK)
    result = _graded(task, write(tmp_path / "s.py", TRANSPOSED), lanes=True)
    imports = {c.name: c for c in result.checks}["numpy-only"]
    assert imports.status == "failed" and "json" in imports.message


def test_nothing_of_the_lane_outlives_the_grade(tmp_path):
    """The lane is reaped, and every worker (this process's and the lane's) ended."""
    task = load_task(PE_TASK)
    before = set(_children())  # other tests' pools in this process are not the lane's
    result = _graded(task, write(tmp_path / "s.py", TRANSPOSED), lanes=True)
    assert result.score < result.max_score
    assert not set(_children()) - before


def _children():
    """This process's children (a lane left unreaped would be one)."""
    me = str(os.getpid())
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me:
            found.append(pid)
    return found


SLOW_OFF_THE_FROZEN_CASES = """
import time

import numpy as np

FROZEN = {frozen!r}


def sinusoidal_pe(max_len, d_model, base=10000.0):
    if (max_len, d_model) not in FROZEN:  # (the inputs only a shrink sends: each takes its limit)
        time.sleep(30)
    return np.zeros((max_len, d_model))


def add_positional_encoding(x, base=10000.0):
    return x + 1.0
"""


def _frozen_tables():
    from grader.cases.generate import case_set
    from grader.grading.prepared import PreparedTask

    task = load_task(PE_TASK)
    prepared = PreparedTask.of(task)
    found = set()
    for check in task.checks:
        if check.call == "sinusoidal_pe":
            cases = case_set(task, prepared.reference, check, freeze=prepared.freeze)
            found |= {(int(c["max_len"]), int(c["d_model"])) for c in cases.cases}
    return found


def test_kill_9_of_the_check_mid_shrink_leaves_no_lane_and_no_worker(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    from helpers.cli import no_process_with
    from helpers.paths import ROOT

    marker = f"lanes-killed-{os.getpid()}"
    student = write(tmp_path / f"{marker}.py", SLOW_OFF_THE_FROZEN_CASES.format(frozen=_frozen_tables()))
    env = dict(os.environ, GRADER_CACHE_DIR=str(tmp_path / "cache"))
    check = subprocess.Popen(
        [sys.executable, "-m", "grader", "check", PE_TASK, student],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not _lane_of(check.pid, marker):
        time.sleep(0.05)  # (until the lane runs: a fork of the check with a worker of its own)
    assert check.poll() is None and _lane_of(check.pid, marker), "no lane ran"
    os.kill(check.pid, signal.SIGKILL)
    check.wait()
    # (at once: a lane left alone would go on shrinking, a call's whole limit at a time)
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline and not no_process_with(marker):
        time.sleep(0.05)
    assert no_process_with(marker)


def _lane_of(grader, marker):
    """The check's forked lane, once it has started its worker: a child of the check with
    the check's command line that has a child of its own."""
    parents = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                parents[pid] = f.read().rsplit(")", 1)[1].split()[1]
        except OSError:
            continue
    for pid, parent in parents.items():
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                forked = marker.encode() in f.read()
        except OSError:
            continue
        if forked and parent == str(grader) and pid in parents.values():
            return pid
    return None
