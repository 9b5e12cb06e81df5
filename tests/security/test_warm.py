"""Warm workers: one fork server grades submission after submission, so what one student's
code does must never reach the next one's grading: no process, file, memory or signal
crosses from one worker to the next, and the server itself cannot be touched.
Also the pipelined calls, which every sandbox uses."""

import os
import secrets
import time

import pytest
from helpers.cli import no_process_with
from helpers.paths import PE_SAMPLES
from helpers.tasks import write
from helpers.tiers import RLIMITS, warm_tiers

from grader.records.limits import Limits
from grader.sandbox import ForeignArray, warm
from grader.sandbox.launcher import ABANDON_SECONDS, Sandbox

WARM_TIERS = list(warm_tiers())
LIMITS = Limits(call_seconds=1.0, submission_seconds=20)

pytestmark = pytest.mark.skipif(not WARM_TIERS, reason="warm workers need Landlock >= 6 and a cgroup")


@pytest.fixture(params=WARM_TIERS)
def slot(request):
    chosen = warm.Slot(LIMITS, request.param)
    yield chosen
    chosen.close()


def run(slot, path, function, *args):
    """Load ``path`` in a worker of the slot and call ``function``; returns the outcome,
    its value as plain Python (a list comes back as the array it holds)."""
    with Sandbox(path, [function], LIMITS, slot.tier, slot.spawn) as box:
        loaded = box.load()
        assert loaded.status == "ok", loaded.error
        outcome = box.call(function, list(args))
    if isinstance(outcome.value, ForeignArray):
        outcome.value = outcome.value.array.tolist()
    return outcome


def test_workers_of_one_server_come_from_the_same_warm_process(slot, tmp_path):
    path = write(
        tmp_path / "who.py",
        """
        import os
        def who():
            return [os.getpid(), os.getppid()]
    """,
    )
    first, second = run(slot, path, "who").value, run(slot, path, "who").value
    assert first[1] == second[1], "both workers should be forked by the same server"
    assert first[0] != second[0], "each submission gets a new process"
    assert slot.server.forks == 2


def test_each_worker_has_its_own_random_state_like_a_new_process(slot, tmp_path):
    path = write(
        tmp_path / "draw.py",
        """
        import random
        import numpy as np
        def draw():
            return [float(np.random.rand()), random.random()]
    """,
    )
    draws = [tuple(run(slot, path, "draw").value) for _ in range(3)]
    assert len(set(draws)) == 3, "forked workers must not replay the server's random state"


def test_a_process_left_behind_is_gone_before_the_next_submission(slot, tmp_path):
    marker = f"left-{secrets.token_hex(6)}"
    leaver = write(
        tmp_path / "leaver.py",
        f"""
        import os, sys
        def leave():
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)",
                                              "{marker}"])
                os._exit(0)
            return 1
    """,
    )
    assert run(slot, leaver, "leave").value == 1
    assert slot.server.cgroup.pids() == slot.server.keep, "only the server's own processes remain"
    assert no_process_with(marker), "the detached process survived"


def test_a_worker_cannot_signal_trace_or_read_the_server(slot, tmp_path):
    honest = write(tmp_path / "honest.py", "def double(x):\n    return 2 * x\n")
    assert run(slot, honest, "double", 1).value == 2
    server = slot.server.proc.pid
    attacker = write(
        tmp_path / "attacker.py",
        """
        import ctypes, os, signal
        def strike():
            done = []
            server = os.getppid()
            for sig in (signal.SIGKILL, signal.SIGSTOP, signal.SIGTERM):
                try:
                    os.kill(server, sig)
                    done.append(f"signal {sig}")
                except OSError:
                    pass
            for name in ("mem", "environ", "maps", "cmdline"):
                try:
                    with open(f"/proc/{server}/{name}", "rb") as f:
                        f.read(1)
                    done.append(f"read {name}")
                except OSError:
                    pass
            PTRACE_ATTACH = 16
            if ctypes.CDLL(None).ptrace(PTRACE_ATTACH, server, 0, 0) == 0:
                done.append("ptrace")
            return done
    """,
    )
    assert run(slot, attacker, "strike").value == []
    assert slot.server.proc.pid == server and slot.server.usable(), "the same server goes on"
    assert run(slot, honest, "double", 21).value == 42


# Looks for the classmate's secret in every object of its process and on every file it can
# list. The secret is handed over reversed, so the search itself does not hold it.
SEARCH = """
import gc, os

def search(reversed_secret):
    secret = reversed_secret[::-1]
    def holds(value):
        return isinstance(value, str) and value is not secret and secret in value
    found = []
    for obj in gc.get_objects():
        try:
            if isinstance(obj, dict):
                values = list(obj.keys()) + list(obj.values())
            elif isinstance(obj, (list, tuple, set, frozenset)):
                values = list(obj)
            elif hasattr(obj, "__code__"):
                values = list(obj.__code__.co_consts)
            else:
                continue
            if any(holds(v) for v in values):
                found.append("memory")
                break
        except Exception:
            pass
    here = os.getcwd()
    for top in (here, os.path.dirname(here), "/tmp", "/"):
        for root, dirs, files in os.walk(top):
            if root.count(os.sep) > 4:
                dirs[:] = []
            found += [os.path.join(root, n) for n in files if n in ("notes.txt", "classmate.py")]
    return sorted(set(found))
"""


def test_nothing_of_one_submission_is_visible_to_the_next(slot, tmp_path):
    secret = f"classmate-secret-{secrets.token_hex(8)}"
    classmate = write(
        tmp_path / "classmate.py",
        SEARCH
        + f"""
SECRET = "{secret}"
with open("notes.txt", "w") as f:   # in its own folder, its working directory
    f.write(SECRET)
""",
    )
    # The search finds the secret where it is (its own worker)...
    own = run(slot, classmate, "search", secret[::-1]).value
    assert "memory" in own and any(p.endswith("notes.txt") for p in own), own
    # ...and nowhere in the next submission's worker, forked by the same server.
    snoop = write(tmp_path / "snoop.py", SEARCH)
    assert run(slot, snoop, "search", secret[::-1]).value == []


def test_a_worker_cannot_leave_files_for_the_next_one(slot, tmp_path):
    planter = write(
        tmp_path / "planter.py",
        """
        import os
        def plant():
            planted = []
            here = os.getcwd()
            parent = os.path.dirname(here)
            number = int(os.path.basename(here)[1:])
            for target in (os.path.join(parent, "x.py"),
                           os.path.join(parent, f"w{number + 1}"),
                           os.path.join(parent, f"w{number + 1}", "numpy.py")):
                try:
                    if target.endswith(".py"):
                        with open(target, "w") as f:
                            f.write("raise SystemExit")
                    else:
                        os.mkdir(target)
                    planted.append(target)
                except OSError:
                    pass
            return planted
    """,
    )
    assert run(slot, planter, "plant").value == []
    looker = write(
        tmp_path / "looker.py",
        """
        import os
        def look():
            return sorted(os.listdir("."))
    """,
    )
    assert run(slot, looker, "look").value == ["submission.py"]  # its own private copy, alone


def test_shared_memory_of_one_submission_is_gone_for_the_next(slot, tmp_path):
    key = 0x67726472
    hoarder = write(
        tmp_path / "hoarder.py",
        f"""
        import ctypes
        def hoard():
            libc = ctypes.CDLL(None, use_errno=True)
            return libc.shmget({key}, 64 << 20, 0o1000 | 0o600)   # IPC_CREAT
    """,
    )
    assert run(slot, hoarder, "hoard").value >= 0, "SysV shared memory can be made"
    finder = write(
        tmp_path / "finder.py",
        f"""
        import ctypes
        def find():
            return ctypes.CDLL(None).shmget({key}, 0, 0)
    """,
    )
    assert run(slot, finder, "find").value == -1, "the segment died with its worker"


def test_a_worker_has_no_network_not_even_udp(slot, tmp_path):
    sender = write(
        tmp_path / "sender.py",
        """
        import socket
        def send():
            results = []
            for address in (("127.0.0.1", 9), ("8.8.8.8", 53)):
                try:
                    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                        s.sendto(b"answers?", address)
                    results.append("sent")
                except OSError:
                    results.append("refused")
            return results
    """,
    )
    assert run(slot, sender, "send").value == ["refused", "refused"]


def test_a_broken_server_is_replaced_and_grading_goes_on(slot, tmp_path):
    honest = write(tmp_path / "honest.py", "def double(x):\n    return 2 * x\n")
    assert run(slot, honest, "double", 1).value == 2
    slot.server.cgroup.kill_all()  # as the kernel's OOM killer might
    slot.server.proc.wait(timeout=5)
    assert run(slot, honest, "double", 2).value == 4


def test_a_server_is_renewed_after_many_submissions(slot, tmp_path, monkeypatch):
    monkeypatch.setattr(warm, "FORKS_PER_SERVER", 2)
    honest = write(tmp_path / "honest.py", "def double(x):\n    return 2 * x\n")
    servers = set()
    for i in range(3):
        assert run(slot, honest, "double", i).value == 2 * i
        servers.add(slot.server.proc.pid)
    assert len(servers) == 2


def test_warm_workers_grade_exactly_like_fresh_ones(pe_task, monkeypatch):
    from grader.grading.run import GradeOptions, grade

    forks = []
    monkeypatch.setattr(
        warm.ForkServer,
        "spawn",
        lambda self, *a, real=warm.ForkServer.spawn: forks.append(1) or real(self, *a),
    )
    sample = os.path.join(PE_SAMPLES, "mistake_sin_cos_swapped.py")
    fresh = grade(pe_task, sample, GradeOptions())
    assert not forks
    warm_result = grade(pe_task, sample, GradeOptions(warm_workers=True))
    assert forks, "the warm grading forked its worker"
    assert [(c.name, c.status, c.message, c.failing_input) for c in warm_result.checks] == [
        (c.name, c.status, c.message, c.failing_input) for c in fresh.checks
    ]


# --------------------------------------------------------------------------- pipelined calls

CALLS = """
import sys, time
def echo(x):
    print(f"out {x}")
    print(f"err {x}", file=sys.stderr)
    if x == 3:
        time.sleep(60)
    return x
def slow(x):
    time.sleep(x)
    return x
"""


@pytest.fixture(params=[RLIMITS] + WARM_TIERS)
def box(request, tmp_path):
    path = write(tmp_path / "calls.py", CALLS)
    if request.param == RLIMITS:
        sandbox = Sandbox(path, ["echo"], LIMITS, RLIMITS)
    else:
        slot = warm.Slot(LIMITS, request.param)
        request.addfinalizer(slot.close)
        sandbox = Sandbox(path, ["echo"], LIMITS, request.param, slot.spawn)
    yield sandbox
    sandbox.close()


def test_pipelined_calls_each_get_their_own_output_and_time_limit(box):
    start = time.monotonic()
    outcomes = list(box.calls("echo", [([x], {}) for x in range(6)]))
    assert [o.status for o in outcomes] == ["ok", "ok", "ok", "timeout", "ok", "ok"]
    # echo(3) sleeps 60 s: well under that means it was cut at its own limit (the statuses
    # say so too); the rest is room for a busy machine.
    assert time.monotonic() - start < 30
    for x, outcome in enumerate(outcomes):
        if outcome.status == "ok":
            assert outcome.value == x
            assert outcome.stdout == f"out {x}\n"
            assert outcome.stderr == f"err {x}\n"
    assert box.restarts == 1


def test_stopping_early_does_not_wait_for_calls_sent_ahead(box):
    outcomes = box.calls("slow", [([0], {})] + [([0.5], {})] * 40)
    assert next(outcomes).status == "ok"
    start = time.monotonic()
    outcomes.close()
    # Waiting for the 40 calls sent ahead would take 20 s; the abandon itself takes
    # ABANDON_SECONDS and a kill (the rest is room for a busy machine).
    assert time.monotonic() - start < ABANDON_SECONDS + 8
    assert box.call("slow", [0]).status == "ok"  # the sandbox goes on (a new worker if need be)
