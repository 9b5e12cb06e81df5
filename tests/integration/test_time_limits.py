"""Time limits that follow the reference (call_limits.py): a looping function costs about
one short timeout, a sleeping one is stopped by the wall-clock backstop, a slow but correct
one is told which sizes were too slow, an explicit --call-seconds is absolute, and a loaded
machine never turns a correct call into a timeout (CPU time counts, not wall time)."""

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest
from helpers.cli import run_cli
from helpers.paths import PE_TASK, ROOT
from helpers.tasks import score_without

LOOPS = """
import numpy as np


def sinusoidal_pe(max_len, d_model, base=10000.0):
    while True:
        pass


def add_positional_encoding(x, base=10000.0):
    x = np.asarray(x, dtype=float)
    return x + sinusoidal_pe(x.shape[-2], x.shape[-1], base)
"""

SLEEPS = LOOPS.replace("    while True:\n        pass", "    import time\n    time.sleep(10 ** 6)")

# Right, and fast up to 200,000 table entries; above, it computes for a minute first.
SLOW_WHEN_LARGE = """
import numpy as np


def sinusoidal_pe(max_len, d_model, base=10000.0):
    if max_len * d_model > 200_000:
        for _ in range(10 ** 9):
            pass
    pe = np.zeros((max_len, d_model))
    pos = np.arange(max_len, dtype=np.float64)[:, None]
    half = d_model // 2
    angle = pos / base ** (2 * np.arange(half) / d_model)
    pe[:, 0:2 * half:2] = np.sin(angle)
    pe[:, 1:2 * half:2] = np.cos(angle)
    return pe


def add_positional_encoding(x, base=10000.0):
    x = np.asarray(x, dtype=float)
    return x + sinusoidal_pe(x.shape[-2], x.shape[-1], base)
"""


def grade(tmp_path, mode, source, *flags):
    """The report of ``source`` graded in ``mode`` with ``flags``: by ``grader check``, or
    as the one file of a class (``grader batch``, warm workers) for a warm mode; and the
    seconds it took."""
    path = tmp_path / "student.py"
    path.write_text(textwrap.dedent(source))
    start = time.monotonic()
    if getattr(mode, "warm", False):
        folder, out = tmp_path / "class", tmp_path / "out"
        folder.mkdir()
        (folder / "student.py").write_bytes(path.read_bytes())
        done = run_cli(
            "batch", PE_TASK, str(folder), "--out", str(out), "--jobs", "1", "--isolation", str(mode), *flags
        )
        text = (out / "reports-positional-encoding.jsonl").read_text().splitlines()[0]
    else:
        done = run_cli("check", PE_TASK, str(path), "--format", "json", "--isolation", str(mode), *flags)
        text = done.stdout
    assert done.returncode in (0, 1), done.stderr[-2000:]
    return json.loads(text), time.monotonic() - start


def checks(report):
    return {c["name"]: c for c in report["checks"]}


def test_an_endless_loop_costs_one_short_timeout(tmp_path, tier):
    report, seconds = grade(tmp_path, tier, LOOPS)
    assert seconds < 15, f"grading took {seconds:.1f} s"  # bench/limits_speed.py: the real figure
    by_name = checks(report)
    first = by_name["example-table-3x4"]
    assert first["status"] == "failed" and first["reason"] == "timeout"
    # which limit, and why
    assert "did not finish within 0.5 s: 100 × the reference's" in first["message"]
    assert "on this case, at least 0.5 s" in first["message"]
    later = by_name["table-shape"]
    assert (later["status"], later["reason"]) == ("skipped", "timed-out-before")
    assert later["message"].startswith("not run: sinusoidal_pe timed out (limit 0.5 s")
    assert "has not finished any call" in later["message"]
    timed_out = [c for c in report["checks"] if c["reason"] == "timeout"]
    assert len(timed_out) == 2  # one per function: sinusoidal_pe, add_positional_encoding


def test_a_sleeping_call_is_stopped_by_the_wall_clock_backstop(tmp_path, tier):
    report, seconds = grade(tmp_path, tier, SLEEPS)
    assert seconds < 20, f"grading took {seconds:.1f} s"
    first = checks(report)["example-table-3x4"]
    assert first["reason"] == "timeout"
    assert "of wall-clock time" in first["message"] and "it was waiting" in first["message"]


# Right and fast on its first call of each function; every later call sleeps (then
# answers right, so it is never "not run"), or computes in children it never reaps (a
# cgroup v1 listing of live processes misses their time).
STALLS_AFTER_FIRST = LOOPS.replace(
    "    while True:\n        pass",
    """    import time
    calls.append(1)
    if len(calls) > 1:
        time.sleep(1.9)
    pe = np.zeros((max_len, d_model))
    pos = np.arange(max_len, dtype=np.float64)[:, None]
    half = d_model // 2
    angle = pos / base ** (2 * np.arange(half) / d_model)
    pe[:, 0:2 * half:2] = np.sin(angle)
    pe[:, 1:2 * half:2] = np.cos(angle)
    return pe""",
).replace("import numpy as np\n", "import numpy as np\ncalls = []\n", 1)

HIDES_ITS_COMPUTING = LOOPS.replace(
    "    while True:\n        pass",
    """    import os
    for _ in range(50):
        pid = os.fork()
        if pid == 0:
            x = 0
            for k in range(3_000_000):
                x += k
            os._exit(0)
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)   # waits, never reaps
    os.read(os.pipe()[0], 1)""",
)


def test_a_submission_that_stalls_after_its_first_call_costs_seconds_not_a_minute(tmp_path, plain_tier):
    """Each stalling call may wait past its limit only while the submission's grace lasts
    (sandbox/waiting.py GRACE_SECONDS, for all its calls together); without it, every check cost
    a backstop and the submission its whole 60 s budget."""
    report, seconds = grade(tmp_path, plain_tier, STALLS_AFTER_FIRST)
    assert seconds < 40, f"grading took {seconds:.1f} s"
    stopped = [c for c in report["checks"] if c.get("reason") == "timeout"]
    assert stopped and any("used up the 5 s of waiting" in c["message"] for c in stopped)
    assert not any(c.get("reason") == "budget" for c in report["checks"])


def test_computing_in_unreaped_children_is_counted_as_computing(tmp_path, plain_tier):
    """Where the worker has a cgroup that keeps the time of ended processes (v2, or v1's
    cpuacct), a call that computes in children it never reaps is stopped by its CPU limit,
    and the report says it was computing."""
    report, seconds = grade(tmp_path, plain_tier, HIDES_ITS_COMPUTING)
    first = checks(report)["example-table-3x4"]
    assert first["reason"] == "timeout"
    if plain_tier != "rlimits":  # (rlimits has no cgroup of its own to read)
        assert "it was waiting" not in first["message"], first["message"]
        assert "× the reference's" in first["message"]


def test_a_slow_but_correct_function_is_told_which_sizes_were_too_slow(tmp_path, plain_tier):
    report, seconds = grade(tmp_path, plain_tier, SLOW_WHEN_LARGE)
    by_name = checks(report)
    bounds = by_name["table-at-bounds"]
    assert bounds["reason"] == "timeout"
    assert bounds["failing_input"] == "sinusoidal_pe(max_len=8192, d_model=64)"
    assert "× the reference's" in bounds["message"]
    # float64-precision asks for 8192 rows too: its own point, for the same reason
    assert by_name["float64-precision"]["reason"] == "timeout"
    assert "× the reference's" in by_name["float64-precision"]["message"]
    assert report["score"] == score_without("table-at-bounds", "float64-precision")
    assert seconds < 30, f"grading took {seconds:.1f} s"


def test_an_explicit_call_seconds_is_absolute(tmp_path, plain_tier):
    report, seconds = grade(tmp_path, plain_tier, LOOPS, "--call-seconds", "1.5")
    first = checks(report)["example-table-3x4"]
    assert "did not finish within 1.5 s: the fixed limit of 1.5 s per call" in first["message"]
    assert seconds >= 1.5


@pytest.mark.slow
def test_correct_samples_keep_full_marks_on_a_saturated_machine(tmp_path):
    """Both cores are saturated by four busy loops this test starts (killed at its end),
    and the limits are tighter than the defaults (a floor of 0.25 s instead of 0.5 s), so a
    correct call takes several times longer in wall-clock time than it computes. It keeps
    full marks because the limit counts the worker's CPU time; the margins stay wide: the
    samples' largest call computes for about 0.08 s (correct_loops.py, 8192 x 64), and the
    wall-clock backstop (at least 1 s more than the limit) is far from a call slowed even
    five-fold by the hogs and the other work of the machine."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(4)]
    try:
        time.sleep(0.5)
        for sample in ("correct_loops.py", "correct_vectorized.py", "correct_exp_log.py"):
            path = os.path.join(ROOT, "submissions", "positional-encoding", sample)
            done = run_cli(
                "check", PE_TASK, path, "--format", "json", "--call-floor-seconds", "0.25", timeout=300
            )
            report = json.loads(done.stdout)
            lost = [(c["name"], c["message"]) for c in report["checks"] if c["status"] != "passed"]
            assert done.returncode == 0 and not lost, (sample, lost)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
