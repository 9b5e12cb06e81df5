"""Hostile answers: a submission that writes frames on the worker's channel itself, patches
the worker, or leaves data the checks trip over. Whatever comes back, the trusted side
never crashes (a malformed answer is that call's error, an exception in a check is that
check's error), keeps its own memory bounded by the task, pairs every answer with the
request it answers, and ``grader batch`` stores a row for every submission.

Run under every tier and mode, like test_adversarial.py.
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest
from helpers.cli import run_cli
from helpers.paths import PE_TASK, ROOT
from test_adversarial import BUDGET_SECONDS, CALL_SECONDS, REPORT_BYTES_CAP, ZEROS

TASKS = os.path.join(ROOT, "tasks")


# Run the grader in a process of its own and report its own peak RSS (RUSAGE_SELF: the
# grader process only, not its sandboxed workers, which may legitimately be large). In a
# batch, each pool process (forked from here) reports its own after each submission.
RSS_PROBE = """
import os, sys
sys.argv[0] = "grader"

def peak_kib():
    # this process's own peak (VmHWM): ru_maxrss would start at the test run's size, which
    # Linux carries over the exec of this process
    with open("/proc/self/status") as status:
        return next(int(l.split()[1]) for l in status if l.startswith("VmHWM:"))
import grader.classroom.executors
from grader.cli import main
grade_bytes = grader.classroom.executors.grade_bytes

def measured(*args):
    try:
        return grade_bytes(*args)
    finally:
        sys.stderr.write("\\nGRADER_MAXRSS_KIB=%d\\n" % peak_kib())
        sys.stderr.flush()

grader.classroom.executors.grade_bytes = measured
code = main(sys.argv[1:])
sys.stdout.flush()
sys.stderr.write("\\nGRADER_MAXRSS_KIB=%d\\n" % peak_kib())
sys.stderr.flush()
os._exit(code)
"""


def _grade(tmp_path, tier, source, task=PE_TASK, name="attack.py", extra=()):
    """Grade one file (check, or batch for warm modes); returns (report, the process, the
    peak RSS in MiB of the process that graded it)."""
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
        *extra,
    ]
    if getattr(tier, "warm", False):
        out = tmp_path / "batch-out"
        done = _probe("batch", task, str(folder), "--out", str(out), "--jobs", "1", "--force", *limits)
        reports = [line for f in out.glob("reports-*.jsonl") for line in f.read_text().splitlines()]
        assert len(reports) == 1, f"the batch stored {len(reports)} rows: {done.stderr[-3000:]}"
        report_text = reports[0]
        assert done.returncode == 0, f"the batch failed: {done.stderr[-3000:]}"
    else:
        done = _probe("check", task, str(path), "--format", "json", *limits)
        report_text = done.stdout
        assert done.returncode in (0, 1), f"the grader itself failed: {done.stderr[-3000:]}"
    rss = max(
        [
            int(line.split("=")[1]) / 1024
            for line in done.stderr.splitlines()
            if line.startswith("GRADER_MAXRSS_KIB=")
        ],
        default=None,
    )
    assert rss is not None, done.stderr[-3000:]
    assert len(report_text.encode()) < REPORT_BYTES_CAP, "report is not bounded"
    report = json.loads(report_text)
    assert report["isolation"] == tier
    return report, done, rss


def _probe(*args):
    return subprocess.run(
        [sys.executable, "-c", RSS_PROBE, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=BUDGET_SECONDS * 4 + 60,
        env=dict(os.environ, PYTHONPATH=ROOT),
    )


def _checks(report):
    return {c["name"]: c for c in report["checks"]}


# Finds the worker's channel and the id of the request being answered (by walking the
# stack up to the worker's loop), and writes frames on it as the worker would.
FORGER = """
import gc, json, socket, struct, sys
import numpy as np

def _channel():
    frame = sys._getframe()
    while frame is not None:
        me = frame.f_locals.get("self")
        if isinstance(getattr(me, "sock", None), socket.socket):
            return me.sock
        frame = frame.f_back
    for o in gc.get_objects():
        if isinstance(o, socket.socket) and o.fileno() >= 0:
            return o

def _current_id():
    frame = sys._getframe()
    while frame is not None:
        for name in ("item", "header"):
            v = frame.f_locals.get(name)
            if isinstance(v, dict) and "id" in v:
                return v["id"]
        frame = frame.f_back
    return None

def _forge(header, blobs=(), declared=None):
    # with declared: declare those payload sizes and send none
    header = dict(header, blobs=declared or [len(b) for b in blobs])
    header.setdefault("id", _current_id())
    body = json.dumps(header).encode()
    data = b"GRDR" + struct.pack(">I", len(body)) + body
    if declared is None:
        data += b"".join(blobs)
    _channel().sendall(data)

def _npy(descr, shape, payload):
    head = "{'descr': '%s', 'fortran_order': False, 'shape': %r, }" % (descr, shape)
    head += " " * (63 - (10 + len(head)) % 64) + "\\n"
    return b"\\x93NUMPY\\x01\\x00" + len(head).to_bytes(2, "little") + head.encode() + payload
"""

FUNCTIONS = """
def sinusoidal_pe(max_len, d_model, base=10000.0):
    ATTACK
    return np.zeros((max_len, d_model))

def add_positional_encoding(x, base=10000.0):
    return x + 0.0
"""


def forging(at_import: str = "", in_call: str = "pass") -> str:
    body = textwrap.dedent(FUNCTIONS).replace("ATTACK", in_call)
    return textwrap.dedent(FORGER) + textwrap.dedent(at_import) + body


def _lost_everything(report):
    """A forging file gains nothing from the function whose answers it forges."""
    gained = [
        c["name"]
        for c in report["checks"]
        if c["status"] == "passed" and c.get("function") == "sinusoidal_pe"
    ]
    assert not gained, f"points from forged answers: {gained}"


# --------------------------------------------------------------------------- class 3

FORGED_LOADS = {
    "params-not-a-list": {
        "ok": True,
        "imports": [],
        "functions": {
            "sinusoidal_pe": {"defined": True, "callable": True, "params": 5},
            "add_positional_encoding": {"defined": True, "callable": True, "params": 5},
        },
    },
    "entries-not-dicts": {
        "ok": True,
        "imports": [],
        "functions": {"sinusoidal_pe": True, "add_positional_encoding": [1, 2]},
    },
}


@pytest.mark.parametrize("forged", sorted(FORGED_LOADS))
def test_forged_load_answer_is_the_submissions_error(tmp_path, tier, forged):
    """The file answers its own load request (before the worker does) with nonsense."""
    report, _, _ = _grade(
        tmp_path, tier, forging(f"_forge(json.loads({json.dumps(FORGED_LOADS[forged])!r}))\n")
    )
    loads = _checks(report)["loads"]
    assert loads["status"] == "error" and "unusable" in loads["message"], loads
    _lost_everything(report)


NPY_ATTACKS = {
    "dtype-f99": "_forge({'ok': True, 'result': {'$nd': 0}}, [_npy('<f99', (2,), bytes(16))])",
}


@pytest.mark.parametrize("attack", sorted(NPY_ATTACKS))
def test_forged_call_answer_is_that_calls_error(tmp_path, tier, attack):
    report, _, _ = _grade(tmp_path, tier, forging(in_call=NPY_ATTACKS[attack]))
    table = _checks(report)["example-table-3x4"]
    assert table["status"] in ("error", "failed") and "unusable" in table["message"], table
    _lost_everything(report)


def test_forged_script_answer_is_the_submissions_error(tmp_path, tier):
    """A script answers its own run request: an array of dtype '<f99' left in 'table'."""
    report, _, _ = _grade(
        tmp_path,
        tier,
        textwrap.dedent(FORGER)
        + textwrap.dedent("""
        _forge({'ok': True, 'globals': {'table': {'$nd': 0, 'type': 'ndarray'}}, 'imports': []},
               [_npy('<f99', (5, 8), bytes(5 * 8 * 8))])
        print((5, 8))
    """),
        task=os.path.join(TASKS, "pe-table-shape"),
    )
    runs = _checks(report)["runs"]
    assert runs["status"] == "error" and "unusable" in runs["message"], runs
    assert _checks(report)["builds-the-table"]["status"] != "passed"


BOOL_SCRIPT = """
import numpy as np
batch = np.zeros((1, 3, 6), dtype=bool)
total = np.ones((1, 3, 6), dtype=bool)
flags = np.ones((4, 6), dtype=bool)
print((1, 3, 6))
"""


def test_script_leaving_bool_arrays(tmp_path, tier):
    report, _, _ = _grade(tmp_path, tier, BOOL_SCRIPT, task=os.path.join(TASKS, "pe-batch-sum"))
    checks = _checks(report)
    assert checks["prints-the-shape"]["status"] == "passed"
    assert checks["adds-the-first-three-rows"]["status"] in ("failed", "error")
    assert checks["builds-the-table"]["status"] in ("failed", "error")


@pytest.mark.parametrize("printed", ["1e999", "-1e999 1e999", "(1e999, 8)"])
def test_script_printing_infinity(tmp_path, tier, printed):
    report, _, _ = _grade(tmp_path, tier, f"print({printed!r})\n", task=os.path.join(TASKS, "pe-table-shape"))
    check = _checks(report)["prints-the-shape"]
    assert check["status"] == "failed" and "inf" in check["message"], check


# --------------------------------------------------------------------------- class 8

# Generous: an honest file costs the grader about 70 MB; the attacks below cost it 1 GB
# and more without the task's caps.
GRADER_RSS_BOUND_MIB = 300


HUGE_BLOBS = {  # two 512 MiB blobs declared (under the wire's global caps) ...
    "declared-only": "import time; time.sleep(60)",  # ... none sent
    "declared-and-sent": "[_channel().sendall(bytes(1 << 20)) for _ in range(1024)]",  # ... sent
}


@pytest.mark.parametrize("sent", sorted(HUGE_BLOBS))
def test_forged_declarations_of_huge_blobs(tmp_path, tier, sent):
    report, _, rss = _grade(
        tmp_path,
        tier,
        forging(
            in_call=(
                "_forge({'ok': True, 'result': {'$nd': 0}}, declared=[512 << 20, 512 << 20]); "
                + HUGE_BLOBS[sent]
            )
        ),
    )
    assert _checks(report)["example-table-3x4"]["status"] in ("error", "failed")
    _lost_everything(report)
    assert rss < GRADER_RSS_BOUND_MIB, f"the grader's peak RSS was {rss:.0f} MiB"


BIG_RETURN = """
import sys
import numpy as np
for name in ("__main__", "worker", "answers"):  # the worker's own cap is a courtesy: lift it
    module = sys.modules.get(name)
    if module is not None and hasattr(module, "OUTPUT_BYTES_CAP"):
        module.OUTPUT_BYTES_CAP = 1 << 40

def sinusoidal_pe(max_len, d_model, base=10000.0):
    return np.ones(32 << 20)  # 256 MiB of float64

def add_positional_encoding(x, base=10000.0):
    return np.ones(32 << 20)
"""


@pytest.mark.slow  # 256 MiB per tier
def test_256_mib_returned_array_does_not_reach_the_grader(tmp_path, tier):
    report, _, rss = _grade(tmp_path, tier, BIG_RETURN)
    table = _checks(report)["example-table-3x4"]
    assert table["status"] in ("error", "failed")
    assert report["score"] <= 1
    assert rss < GRADER_RSS_BOUND_MIB, f"the grader's peak RSS was {rss:.0f} MiB"


# --------------------------------------------------------------------------- request ids

CORRECT = """
def _table(max_len, d_model, base=10000.0):
    pe = np.zeros((max_len, d_model))
    positions = np.arange(max_len)[:, None]
    pairs = np.arange(d_model // 2)
    angles = positions / base ** (2 * pairs / d_model)
    pe[:, 0:2 * (d_model // 2):2] = np.sin(angles)
    pe[:, 1:2 * (d_model // 2):2] = np.cos(angles)
    return pe

def sinusoidal_pe(max_len, d_model, base=10000.0):
    table = _table(max_len, d_model, base)
    if (max_len, d_model) == (3, 4):  # one extra answer, then the real one: out of step
        _forge({'ok': True, 'result': {'$nd': 0}}, [_npy('<f8', (3, 4), table.tobytes())])
    return table

def add_positional_encoding(x, base=10000.0):
    return x + _table(x.shape[-2], x.shape[-1], base)
"""


def test_an_extra_answer_does_not_shift_later_answers(tmp_path, tier):
    """A correct file that sends one answer twice. Without request ids every later answer
    is paired with the call before it, for the rest of the submission."""
    report, _, _ = _grade(tmp_path, tier, textwrap.dedent(FORGER) + textwrap.dedent(CORRECT))
    checks = _checks(report)
    # (Its frame walk to reach the worker's socket costs the import point, and the mutation
    # check's credit: test_hostile_mutation.py.)
    out_of_turn = [
        n
        for n, c in checks.items()
        if c["status"] != "passed" and n != "numpy-only" and not c["message"].startswith("not verified")
    ]
    assert all("answers request" in checks[n]["message"] for n in out_of_turn), {
        n: checks[n]["message"][:200] for n in out_of_turn
    }
    assert len(out_of_turn) <= 2, out_of_turn


# --------------------------------------------------------------------------- batch


def test_batch_stores_a_row_for_a_forging_submission(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "honest.py").write_text(textwrap.dedent(ZEROS))
    (folder / "forger.py").write_text(forging(in_call=NPY_ATTACKS["dtype-f99"]))
    out = tmp_path / "out"
    done = run_cli(
        "batch",
        PE_TASK,
        str(folder),
        "--out",
        str(out),
        "--jobs",
        "1",
        "--call-seconds",
        str(CALL_SECONDS),
        timeout=240,
    )
    rows = [json.loads(line) for line in (out / "reports-positional-encoding.jsonl").read_text().splitlines()]
    students = sorted(os.path.basename(r["submission"]) for r in rows)
    assert students == ["forger.py", "honest.py"], done.stderr[-3000:]
    assert done.returncode == 0, done.stderr[-3000:]


def test_batch_grader_failure_is_a_row_and_a_nonzero_exit(tmp_path, monkeypatch, capsys):
    """The grader itself fails on one file: that student still gets a row (an error that
    the next run grades again), and the batch exits 3 naming them."""
    import grader.classroom.executors
    from grader.cli import main

    real_grade = grader.classroom.executors.grade

    def failing_grade(task, path, options):
        if os.path.basename(path) == "bob.py":
            raise RuntimeError("the grader tripped")
        return real_grade(task, path, options)

    folder = tmp_path / "class"
    folder.mkdir()
    for student in ("alice", "bob"):
        (folder / f"{student}.py").write_text(textwrap.dedent(ZEROS))
    out = tmp_path / "out"
    args = [
        "batch",
        PE_TASK,
        str(folder),
        "--out",
        str(out),
        "--jobs",
        "1",
        "--no-warm",
        "--isolation",
        "rlimits",
        "--trusted-submissions",
    ]
    # the executors' grade (imported at their top); pool processes fork from here
    monkeypatch.setattr(grader.classroom.executors, "grade", failing_grade)
    assert main(args) == 3
    assert "bob" in capsys.readouterr().err
    rows = {
        os.path.basename(r["submission"]): r
        for r in map(json.loads, (out / "reports-positional-encoding.jsonl").read_text().splitlines())
    }
    assert sorted(rows) == ["alice.py", "bob.py"]
    assert rows["bob.py"]["status"] == "error"
    assert "grader failed" in rows["bob.py"]["checks"][0]["message"]
    with open(out / "grades-positional-encoding.csv") as f:
        assert "bob" in f.read()

    monkeypatch.setattr(grader.classroom.executors, "grade", real_grade)
    assert main(args) == 0  # the next run grades bob again
    rows = {
        os.path.basename(r["submission"]): r
        for r in map(json.loads, (out / "reports-positional-encoding.jsonl").read_text().splitlines())
    }
    assert rows["bob.py"]["checks"][0]["name"] != "submission"


# --------------------------------------------------------------------------- checks


def test_a_check_that_raises_is_that_checks_error(monkeypatch):
    """Whatever a submission makes a check trip over costs that check, not the grading."""
    from grader.authoring import load_task
    from grader.grading import checks
    from grader.grading.run import GradeOptions, grade

    def tripping(ctx, check):
        raise OverflowError("cannot convert float infinity to integer")

    monkeypatch.setattr(checks.KINDS["prints"], "run", tripping)
    task = load_task(os.path.join(TASKS, "pe-table-shape"))
    sample = os.path.join(ROOT, "submissions", "pe-table-shape", "correct_numpy.py")
    result = grade(task, sample, GradeOptions(isolation="rlimits")).to_dict()
    by_name = _checks(result)
    assert by_name["prints-the-shape"]["status"] == "error"
    assert "OverflowError" in by_name["prints-the-shape"]["message"]
    assert by_name["builds-the-table"]["status"] == "passed"
