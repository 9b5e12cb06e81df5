"""Hostile submissions. Each must lose the points it tries to steal, leave no trace (file,
process, connection), and never crash, hang or slow the grader beyond its limits; the
report stays valid JSON of bounded size. Run under every tier that works on this machine.

A hostile file here computes the right answer only if its attack works; otherwise it
returns zeros. So "loses the points it tries to steal" means: it scores no more than an
honest file that returns zeros.
"""

import json
import os
import secrets
import socket
import textwrap
import time

import pytest
from helpers.cli import no_process_with, run_cli
from helpers.paths import PE_SAMPLES, PE_TASK, ROOT
from helpers.tiers import BUBBLEWRAP, ISOLATING, modes, tiers

from grader.sandbox import cgroup

CALL_SECONDS, BUDGET_SECONDS = 2, 8
REPORT_BYTES_CAP = 256 * 1024

ZEROS = """
import numpy as np

def sinusoidal_pe(max_len, d_model, base=10000.0):
    return np.zeros((max_len, d_model))

def add_positional_encoding(x, base=10000.0):
    return x + 0.0
"""

# A hostile file defines honest_* fall-backs and wraps them: CHEAT() is the attack, which
# returns a module with sinusoidal_pe / add_positional_encoding when it works, else None.
FRAME = """
import numpy as np

def _zeros_pe(max_len, d_model, base=10000.0):
    return np.zeros((max_len, d_model))

def _cheat():
    try:
        return CHEAT()
    except Exception:
        return None

def sinusoidal_pe(max_len, d_model, base=10000.0):
    stolen = _cheat()
    if stolen is not None:
        return stolen.sinusoidal_pe(max_len, d_model, base)
    return _zeros_pe(max_len, d_model, base)

def add_positional_encoding(x, base=10000.0):
    stolen = _cheat()
    if stolen is not None:
        return stolen.add_positional_encoding(x, base)
    return x + 0.0
"""


def hostile(cheat_source: str) -> str:
    return textwrap.dedent(cheat_source) + textwrap.dedent(FRAME)


def test_the_tiers_ci_demands_are_here():
    """CI sets GRADER_REQUIRE_TIERS (e.g. bubblewrap,landlock-warm) so that this suite
    cannot silently skip a tier, or the warm workers of a batch in it."""
    required = [t for t in os.environ.get("GRADER_REQUIRE_TIERS", "").split(",") if t]
    missing = [t for t in required if t not in [m.label for m in modes()]]
    assert not missing, f"these sandbox tiers do not work on this machine: {missing}"


@pytest.fixture(scope="module")
def zero_scores(tmp_path_factory):
    folder = tmp_path_factory.mktemp("zeros")
    path = folder / "zeros.py"
    path.write_text(textwrap.dedent(ZEROS))
    scores = {}
    for t in tiers():
        done = run_cli("check", PE_TASK, str(path), "--format", "json", "--isolation", t)
        scores[t] = json.loads(done.stdout)["score"]
    return scores


def grade_attack(tmp_path, tier, source, name="attack.py", env=None):
    folder = tmp_path / "class"
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(textwrap.dedent(source))
    limits = [
        "--isolation",
        tier,
        "--call-seconds",
        str(CALL_SECONDS),
        "--submission-seconds",
        str(BUDGET_SECONDS),
    ]
    start = time.monotonic()
    if getattr(tier, "warm", False):
        report_text, done = _grade_in_batch(tmp_path, path, limits, env)
    else:
        done = run_cli(
            "check", PE_TASK, str(path), "--format", "json", *limits, env=env, timeout=BUDGET_SECONDS * 4 + 30
        )
        report_text = done.stdout
    seconds = time.monotonic() - start
    assert done.returncode in (0, 1), f"the grader itself failed: {done.stderr[-2000:]}"
    assert len(report_text.encode()) < REPORT_BYTES_CAP, "report is not bounded"
    report = json.loads(report_text)
    assert report["isolation"] == tier
    # Limits hold: the budget, plus starting workers, plus the grader's own work (generous,
    # for a busy machine; without the budget an endless attack runs until the timeout above).
    assert seconds < BUDGET_SECONDS * 2 + 30, f"grading took {seconds:.1f} s"
    return report, seconds


def _grade_in_batch(tmp_path, path, limits, env):
    """The attack as the only file of a class folder of its own (so that files the test
    puts beside it are not graded too); returns its report and the finished batch."""
    folder = tmp_path / "batch-class"
    folder.mkdir(exist_ok=True)
    (folder / path.name).write_bytes(path.read_bytes())
    out = tmp_path / "batch-out"
    done = run_cli(
        "batch",
        PE_TASK,
        str(folder),
        "--out",
        str(out),
        "--jobs",
        "1",
        "--force",
        *limits,
        env=env,
        timeout=BUDGET_SECONDS * 4 + 30,
    )
    reports = (out / "reports-positional-encoding.jsonl").read_text().splitlines() if out.exists() else []
    assert len(reports) == 1, f"the batch graded {len(reports)} files: {done.stderr[-2000:]}"
    return reports[0], done


# --------------------------------------------------------------------------- resources

LOOPS = {
    "loop-at-import": "while True:\n    pass\n",
    "loop-in-call": ZEROS.replace("    return np.zeros((max_len, d_model))", "    while True:\n        pass"),
    "ignores-signals": "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
    + ZEROS.replace("    return np.zeros((max_len, d_model))", "    while True:\n        pass"),
    "sleeps-forever": "import time\n"
    + ZEROS.replace("    return np.zeros((max_len, d_model))", "    time.sleep(10 ** 6)"),
}


@pytest.mark.slow  # each runs to its time budget
@pytest.mark.parametrize("attack", sorted(LOOPS))
def test_endless_work_is_cut_off(tmp_path, tier, zero_scores, attack):
    report, seconds = grade_attack(tmp_path, tier, LOOPS[attack])
    assert report["score"] <= zero_scores[tier]
    assert report["status"] in ("failed", "error")
    assert any("did not finish within" in c["message"] or "budget" in c["message"] for c in report["checks"])


def test_many_gib_are_refused(tmp_path, tier, zero_scores):
    report, _ = grade_attack(
        tmp_path,
        tier,
        ZEROS.replace(
            "    return np.zeros((max_len, d_model))",
            "    hog = np.ones((64, 1024, 1024, 1024), dtype=np.uint8)  # 64 GiB\n"
            "    return np.zeros((max_len, d_model)) + hog[0, 0, 0, 0]",
        ),
    )
    assert report["score"] <= zero_scores[tier]
    assert any("MemoryError" in c["message"] or "killed" in c["message"] for c in report["checks"])


def test_zero_stride_view_of_tens_of_gb(tmp_path, tier, zero_scores):
    report, _ = grade_attack(
        tmp_path,
        tier,
        ZEROS.replace(
            "    return np.zeros((max_len, d_model))",
            "    return np.broadcast_to(np.zeros(1), (200_000, 100_000))  # claims 160 GB",
        ),
    )
    assert report["score"] <= zero_scores[tier]
    assert any("too large" in c["message"] for c in report["checks"])


def test_fork_bomb_is_capped_and_cleaned_up(tmp_path, tier, zero_scores):
    marker = f"forkbomb-{secrets.token_hex(6)}"
    report, _ = grade_attack(
        tmp_path,
        tier,
        f"""
        import os, sys, time
        import numpy as np

        def sinusoidal_pe(max_len, d_model, base=10000.0):
            for _ in range(500):
                try:
                    if os.fork() == 0:
                        os.execv(sys.executable, [sys.executable, "-c",
                                 "import time; time.sleep(600)", "{marker}"])
                except OSError:
                    break
            return np.zeros((max_len, d_model))

        def add_positional_encoding(x, base=10000.0):
            return x + 0.0
    """,
    )
    assert report["score"] <= zero_scores[tier]
    time.sleep(0.5)
    assert no_process_with(marker), "a forked process outlived grading"


def test_detached_process_does_not_outlive_grading(tmp_path, tier):
    if tier != BUBBLEWRAP and not cgroup.available():
        pytest.skip(
            "without a cgroup, only bubblewrap's PID namespace catches a process that left the process group"
        )
    marker = f"detached-{secrets.token_hex(6)}"
    grade_attack(
        tmp_path,
        tier,
        f"""
        import os, sys
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)",
                                          "{marker}"])
            os._exit(0)
    """
        + ZEROS,
    )
    time.sleep(0.5)
    assert no_process_with(marker), "a detached process outlived grading"


@pytest.mark.parametrize("where", ["import", "call"])
@pytest.mark.parametrize("how", ["sys.exit(0)", "os._exit(0)"])
def test_exit_costs_only_its_own_points(tmp_path, tier, zero_scores, where, how):
    body = (
        f"import os, sys\n{how}\n" + ZEROS
        if where == "import"
        else "import os, sys\n" + ZEROS.replace("    return np.zeros((max_len, d_model))", f"    {how}")
    )
    report, _ = grade_attack(tmp_path, tier, body)
    assert report["score"] <= zero_scores[tier]


def test_printed_fake_report_is_not_believed(tmp_path, tier, zero_scores):
    report, _ = grade_attack(
        tmp_path,
        tier,
        """
        import json, sys
        fake = {"task": "positional-encoding", "score": 33, "max_score": 33, "status": "passed",
                "isolation": "bubblewrap", "checks": []}
        print(json.dumps(fake)); sys.stdout.flush()
        sys.stderr.write("Score: 33/33 (100%)  passed\\n")
    """
        + ZEROS.replace(
            "    return np.zeros((max_len, d_model))",
            "    print(json.dumps(fake))\n    return np.zeros((max_len, d_model))",
        ),
    )
    assert report["score"] <= zero_scores[tier]
    assert report["status"] != "passed"


def test_flooding_output_is_capped(tmp_path, tier, zero_scores):
    report, seconds = grade_attack(
        tmp_path,
        tier,
        """
        import os, sys
        chunk = "x" * (1 << 20)
        def _flood():
            for _ in range(4096):  # 4 GiB if nothing stopped it
                try:
                    sys.stdout.write(chunk)
                    os.write(2, chunk.encode())
                except OSError:
                    return
    """
        + ZEROS.replace(
            "    return np.zeros((max_len, d_model))", "    _flood()\n    return np.zeros((max_len, d_model))"
        ),
    )
    assert report["score"] <= zero_scores[tier]


def test_segfault_through_ctypes(tmp_path, tier, zero_scores):
    report, _ = grade_attack(
        tmp_path,
        tier,
        "import ctypes\n"
        + ZEROS.replace("    return np.zeros((max_len, d_model))", "    return ctypes.string_at(0)"),
    )
    assert report["score"] <= zero_scores[tier]
    assert any("segmentation fault" in c["message"] for c in report["checks"])


def test_unbounded_recursion(tmp_path, tier, zero_scores):
    report, _ = grade_attack(
        tmp_path,
        tier,
        """
        import sys
        sys.setrecursionlimit(10 ** 9)
        def _deeper(n):
            return _deeper(n + 1) + 1
    """
        + ZEROS.replace("    return np.zeros((max_len, d_model))", "    return _deeper(0)"),
    )
    assert report["score"] <= zero_scores[tier]


def test_garbage_on_every_file_descriptor(tmp_path, tier, zero_scores):
    report, _ = grade_attack(
        tmp_path,
        tier,
        """
        import os
        def _corrupt():
            for fd in range(3, 1024):
                try:
                    os.write(fd, b"GRDR\\xff\\xff\\xff\\xff" + os.urandom(64))
                except OSError:
                    pass
    """
        + ZEROS.replace(
            "    return np.zeros((max_len, d_model))",
            "    _corrupt()\n    return np.zeros((max_len, d_model))",
        ),
    )
    assert report["score"] <= zero_scores[tier]


# --------------------------------------------------------------------------- stealing answers


def test_walking_stack_frames_and_gc_finds_no_answer(tmp_path, tier, zero_scores):
    report, _ = grade_attack(
        tmp_path,
        tier,
        hostile("""
        import gc, sys, types
        import numpy as np

        def CHEAT():
            frame = sys._getframe()
            seen = []
            while frame is not None:
                seen += [v for v in frame.f_locals.values() if isinstance(v, np.ndarray)]
                frame = frame.f_back
            seen += [o for o in gc.get_objects() if isinstance(o, np.ndarray)]
            table = [a for a in seen if a.ndim == 2 and a.any()]
            if not table:
                return None
            answer = table[-1]
            return types.SimpleNamespace(sinusoidal_pe=lambda *a: answer,
                                         add_positional_encoding=lambda x, b: x + answer)
    """),
    )
    assert report["score"] <= zero_scores[tier]


def test_monkeypatching_comparisons_changes_nothing(tmp_path, tier, zero_scores):
    report, _ = grade_attack(
        tmp_path,
        tier,
        """
        import builtins, unittest
        import numpy as np
        np.allclose = lambda *a, **k: True
        np.array_equal = lambda *a, **k: True
        np.isclose = lambda *a, **k: True
        np.testing.assert_allclose = lambda *a, **k: None
        unittest.TestCase.assertEqual = lambda *a, **k: None
        builtins.isinstance = lambda *a: True
    """
        + ZEROS,
    )
    assert report["score"] <= zero_scores[tier]


def test_lying_objects_and_arrays(tmp_path, tier, zero_scores):
    report, _ = grade_attack(
        tmp_path,
        tier,
        """
        import numpy as np

        class Liar(np.ndarray):
            def __eq__(self, other):
                return True
            def __array_ufunc__(self, *args, **kwargs):
                return True
            def __array__(self, *args, **kwargs):
                return np.zeros(0)

        class Anything:
            shape = property(lambda self: (3, 4))
            dtype = np.float64
            def __eq__(self, other):
                return True

        def sinusoidal_pe(max_len, d_model, base=10000.0):
            if d_model % 3 == 0:
                return np.array([Anything()] * max_len, dtype=object)
            if d_model % 2:
                return Anything()
            return np.zeros((max_len, d_model)).view(Liar)

        def add_positional_encoding(x, base=10000.0):
            return np.asarray(x).view(Liar) + 0
    """,
    )
    assert report["score"] <= zero_scores[tier]


@pytest.mark.parametrize("target", ["reference", "other-students", "search"])
def test_reading_answers_from_disk(tmp_path, tier, zero_scores, target):
    if tier not in ISOLATING:
        pytest.skip("the rlimits tier does not hide the filesystem; its reports say so")
    # A correct classmate beside the submission, as in a real class folder.
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "classmate.py").write_text(
        open(os.path.join(PE_SAMPLES, "correct_vectorized.py")).read()
    )
    paths = {
        "reference": [
            os.path.join(PE_TASK, "reference.py"),
            os.path.join(ROOT, "tasks", "positional-encoding", "reference.py"),
        ],
        "other-students": [
            str(tmp_path / "class" / "classmate.py"),
            os.path.join(PE_SAMPLES, "correct_loops.py"),
        ],
        "search": [],
    }[target]
    report, _ = grade_attack(
        tmp_path,
        tier,
        hostile(f"""
        import importlib.util, os

        def _load(path):
            spec = importlib.util.spec_from_file_location("stolen", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module

        def _candidates():
            yield from {paths!r}
            here = os.path.dirname(os.path.abspath(__file__))
            for name in sorted(os.listdir(here)):
                if name.endswith(".py") and name != os.path.basename(__file__):
                    yield os.path.join(here, name)
            for top in ("/", "/work", "/tmp", os.path.expanduser("~"), "/proc/1/cwd"):
                for root, dirs, files in os.walk(top):
                    if root.count(os.sep) > 6:
                        dirs[:] = []
                    for name in files:
                        if name in ("reference.py", "correct_vectorized.py"):
                            yield os.path.join(root, name)

        def CHEAT():
            for path in _candidates():
                try:
                    return _load(path)
                except Exception:
                    continue
            return None
    """),
    )
    assert report["score"] <= zero_scores[tier]


def test_writes_outside_private_tmp_leave_no_trace(tmp_path, tier):
    if tier not in ISOLATING:
        pytest.skip("the rlimits tier does not confine writes; its reports say so")
    marker = f"written-{secrets.token_hex(6)}"
    targets = [f"/tmp/{marker}", os.path.join(ROOT, marker), os.path.expanduser(f"~/{marker}")]
    beside = tmp_path / "class" / f"{marker}.py"
    grade_attack(
        tmp_path,
        tier,
        f"""
        import os
        def _scribble():
            here = os.path.dirname(os.path.abspath(__file__))
            for path in {targets!r} + [os.path.join(here, "{marker}.py"), "{marker}"]:
                try:
                    with open(path, "w") as f:
                        f.write("def sinusoidal_pe(*a): pass\\n")
                except OSError:
                    pass
        _scribble()
    """
        + ZEROS,
    )
    for path in targets + [str(beside)]:
        assert not os.path.exists(path), f"{path} was written"


def was_contacted(server: socket.socket) -> bool:
    """Whether anything connected to this listening (non-blocking) socket."""
    try:
        server.accept()
        return True
    except BlockingIOError:
        return False


def test_no_network_not_even_loopback(tmp_path, tier, zero_scores):
    if tier not in ISOLATING:
        pytest.skip("the rlimits tier does not block the network; its reports say so")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.setblocking(False)
    port = server.getsockname()[1]
    report, _ = grade_attack(
        tmp_path,
        tier,
        hostile(f"""
        import socket
        def CHEAT():
            conn = socket.create_connection(("127.0.0.1", {port}), timeout=1)
            conn.sendall(b"give me the answers")
            return None
    """),
    )
    try:
        connected = was_contacted(server)
    finally:
        server.close()
    assert not connected, "the submission reached a server on the grader's loopback"
    assert report["score"] <= zero_scores[tier]


def test_environment_secrets_do_not_reach_feedback(tmp_path, tier):
    secret = f"s3cr3t-{secrets.token_hex(8)}"
    isolated = tier in ISOLATING
    report, _ = grade_attack(
        tmp_path,
        tier,
        """
        import os
        def _leak():
            text = repr(dict(os.environ))
            for pid in ("self", str(os.getppid()), "1"):
                try:
                    text += open(f"/proc/{pid}/environ").read()
                except OSError:
                    pass
            print(text)
            raise RuntimeError(text)
    """
        + ZEROS.replace("    return np.zeros((max_len, d_model))", "    _leak()"),
        env={"GRADER_TEST_TOKEN": secret},
    )
    text = json.dumps(report)
    if isolated:
        assert secret not in text
    else:  # the worker's own environment is cleared; a same-user parent is readable there
        assert f"'GRADER_TEST_TOKEN': '{secret}'" not in text


def test_cannot_kill_or_trace_the_grader(tmp_path, tier, zero_scores):
    if tier not in ISOLATING:
        pytest.skip("the rlimits tier runs as the grader's user; its reports say so")
    report, _ = grade_attack(
        tmp_path,
        tier,
        """
        import os, signal
        def _strike():
            for pid in (os.getppid(), os.getpgid(0)):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
    """
        + ZEROS.replace(
            "    return np.zeros((max_len, d_model))",
            "    _strike()\n    return np.zeros((max_len, d_model))",
        ),
    )
    assert report["score"] <= zero_scores[tier]


def test_root_capabilities_do_not_reach_the_submission(tmp_path, tier, zero_scores):
    """Where the grader runs as root, a worker must still hold no capability: with one it
    could raise its own limits, reprioritise itself, or worse (reboot, load modules)."""
    if tier not in ISOLATING:
        pytest.skip("the rlimits tier runs as the grader's user, root included; its reports say so")
    with open(os.path.join(PE_TASK, "reference.py")) as f:
        reference_source = f.read()
    report, _ = grade_attack(
        tmp_path,
        tier,
        hostile(f"""
        import os, resource, types

        def _escalated():
            try:
                os.nice(-1)  # needs CAP_SYS_NICE
                return True
            except OSError:
                pass
            try:  # raising a hard limit needs CAP_SYS_RESOURCE
                resource.setrlimit(resource.RLIMIT_CPU, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
                return True
            except (OSError, ValueError):
                return False

        def CHEAT():
            if not _escalated():
                return None
            answers = types.ModuleType("answers")
            exec({reference_source!r}, answers.__dict__)
            return answers
    """),
    )
    assert report["score"] <= zero_scores[tier]


def test_no_named_unix_socket_of_the_machine_is_in_reach(tmp_path, tier, zero_scores):
    """A named UNIX socket (a container runtime's, the system bus) is found through the
    filesystem, past Landlock and any network namespace: the worker may open no socket."""
    if tier not in ISOLATING:
        pytest.skip("the rlimits tier does not block the network; its reports say so")
    path = f"/tmp/grader-test-{secrets.token_hex(4)}.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen(8)
    server.setblocking(False)
    try:
        report, _ = grade_attack(
            tmp_path,
            tier,
            hostile(f"""
            import socket
            def CHEAT():
                conn = socket.socket(socket.AF_UNIX)
                conn.connect({path!r})
                conn.sendall(b"give me the answers")
                return None
        """),
        )
        connected = was_contacted(server)
    finally:
        server.close()
        os.remove(path)
    assert not connected, "the submission reached a UNIX socket of the grading machine"
    assert report["score"] <= zero_scores[tier]
