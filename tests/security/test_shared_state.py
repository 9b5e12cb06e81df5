"""Hostile submissions, round three (issue 22, class 4): what one worker could leave for
another where it has no namespace of its own. In Gradescope's container (root, no
namespaces: the unprivileged tier; tests/helpers/container_sim.py), with and without a writable
cgroup, and where Landlock works there but user namespaces still do not:

- notes in every place every user may write (/tmp, /var/tmp, /dev/shm with 96 MiB of
  memory, /run/lock, a folder made 0777 there), a SysV shared-memory segment, message queue
  and semaphore set, a POSIX message queue: no later worker finds any of it (the next
  student's ``grader check``, a classmate in a batch graded one at a time or two at once),
  and after the run none of it is left on the machine;
- a hidden check's input written down where the diagnosis worker (a fresh one) could read
  it: the diagnosis must not depend on it;
- computing in a double-forked grandchild, out of the worker's process tree, is stopped or
  counted; a setsid'd, undumpable grandchild does not outlive ``grader check``.

The same notes are tried under the tiers that isolate on this machine (fresh and warm).
"""

import ctypes
import json
import os
import secrets
import shutil
import signal
import time
from pathlib import Path

import pytest
from helpers.cli import run_cli
from helpers.containers import SIMULATED_TIER, in_container
from helpers.tasks import make_task, write
from helpers.tiers import ISOLATING

WORKER_UID_BASE = 1_500_000_000
SHARED = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")
IPC_CREAT, IPC_RMID = 0o1000, 0
MIB = 1 << 20

pytestmark = pytest.mark.skipif(
    os.uname().machine != "x86_64" or os.geteuid() != 0,
    reason="the simulation needs root; the attacks are x86_64 Linux",
)

TASK = """
id: square
title: Square
version: 1
functions:
  square: [x]
checks:
  - name: visible-case
    kind: example
    call: square
    args: {x: {array: {value: [1.5, 2.0]}}}
"""
CORRECT = "\ndef square(x):\n    return np.asarray(x, dtype=float) ** 2\n"

# The notes: the names and IPC keys carry TOKEN (a test's own), so runs never meet.
NOTES = """
import ctypes, os, time
import numpy as np

TOKEN = "{token}"
KEY = {key}
PLACES = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")
_libc = ctypes.CDLL(None, use_errno=True)
_libc.shmat.restype = ctypes.c_void_p
"""

WRITER = (
    NOTES
    + """
def _leave():
    for place in PLACES:
        try:
            with open(f"{{place}}/grader-note-{{TOKEN}}", "w") as f:
                f.write("the answer is 42")
        except OSError:
            pass
    try:   # a folder every user may write, to hide the note one level down
        os.mkdir(f"/tmp/grader-dir-{{TOKEN}}")
        os.chmod(f"/tmp/grader-dir-{{TOKEN}}", 0o777)
        with open(f"/tmp/grader-dir-{{TOKEN}}/note", "w") as f:
            f.write("the answer is 42")
    except OSError:
        pass
    for part in range(2):   # 96 MiB of the machine's memory (64 MiB is the largest file)
        try:
            with open(f"/dev/shm/grader-big-{{TOKEN}}-{{part}}", "wb") as f:
                f.write(b"x" * (48 << 20))
        except OSError:
            pass
    segment = _libc.shmget(KEY, 4096, {ipc_creat} | 0o666)
    if segment >= 0:
        address = _libc.shmat(segment, None, 0)
        if address not in (None, ctypes.c_void_p(-1).value):
            ctypes.memmove(address, b"the answer is 42", 16)
    _libc.msgget(KEY, {ipc_creat} | 0o666)
    _libc.semget(KEY, 1, {ipc_creat} | 0o666)
    _libc.mq_open(f"/grader-note-{{TOKEN}}".encode(), os.O_CREAT | os.O_RDWR, 0o666, None)

_leave()
time.sleep({linger})   # alive while a classmate graded at the same time looks
"""
    + CORRECT
)

READER = (
    NOTES
    + """
def _seen():
    found = [p for p in [f"{{place}}/grader-note-{{TOKEN}}" for place in PLACES]
             + [f"/tmp/grader-dir-{{TOKEN}}/note", f"/dev/shm/grader-big-{{TOKEN}}-0"] if os.path.exists(p)]
    if _libc.shmget(KEY, 0, 0) >= 0:
        found.append("a SysV shared-memory segment")
    if _libc.msgget(KEY, 0) >= 0:
        found.append("a SysV message queue")
    if _libc.semget(KEY, 0, 0) >= 0:
        found.append("a SysV semaphore set")
    if _libc.mq_open(f"/grader-note-{{TOKEN}}".encode(), os.O_RDONLY) >= 0:
        found.append("a POSIX message queue")
    return found

_deadline = time.monotonic() + {linger}
while True:   # (a classmate graded at the same time may not have written yet)
    _found = _seen()
    if _found or time.monotonic() >= _deadline:
        break
    time.sleep(0.2)
if _found:
    raise RuntimeError("SEEN " + ", ".join(_found))
"""
    + CORRECT
)


def _key(token: str) -> int:
    return int(token, 16) & 0x3FFFFFFF


def writer(token: str, linger: float = 0) -> str:
    return WRITER.format(token=token, key=_key(token), ipc_creat=IPC_CREAT, linger=linger)


def reader(token: str, linger: float = 0) -> str:
    return READER.format(token=token, key=_key(token), linger=linger)


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _ipc_left(token: str) -> list[str]:
    """The SysV IPC objects of this token's key, as /proc/sysvipc lists them."""
    key = _key(token)
    left = []
    for kind in ("shm", "msg", "sem"):
        with open(f"/proc/sysvipc/{kind}") as f:
            rows = [line.split() for line in f.readlines()[1:]]
        left += [f"a SysV {kind} object" for row in rows if row and int(row[0]) == key]
    return left


def leftovers(token: str) -> list[str]:
    """What of this token's notes is on the machine: files and folders (with their owner),
    IPC objects, a POSIX message queue."""
    left = []
    for place in SHARED:
        for name in os.listdir(place):
            if token in name:
                path = os.path.join(place, name)
                left.append(f"{path} (uid {os.lstat(path).st_uid})")
    left += _ipc_left(token)
    queue = _libc().mq_open(f"/grader-note-{token}".encode(), os.O_RDONLY)
    if queue >= 0:
        os.close(queue)
        left.append("a POSIX message queue")
    return left


def remove_leftovers(token: str) -> None:
    """What a failed run left: removed, so that it costs the machine nothing."""
    for place in SHARED:
        for name in os.listdir(place):
            if token in name:
                path = os.path.join(place, name)
                shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.unlink(path)
    libc, key = _libc(), _key(token)
    ident = libc.shmget(key, 0, 0)
    if ident >= 0:
        libc.shmctl(ident, IPC_RMID, None)
    ident = libc.msgget(key, 0)
    if ident >= 0:
        libc.msgctl(ident, IPC_RMID, None)
    ident = libc.semget(key, 0, 0)
    if ident >= 0:
        libc.semctl(ident, 0, IPC_RMID)
    libc.mq_unlink(f"/grader-note-{token}".encode())


def shm_free() -> int:
    st = os.statvfs("/dev/shm")
    return st.f_bavail * st.f_frsize


@pytest.fixture
def token():
    token = secrets.token_hex(4)
    try:
        yield token
    finally:
        remove_leftovers(token)


def _task(container, name, text=TASK, reference=None):
    folder = container["private"] / f"task-{name}-{secrets.token_hex(3)}"
    return make_task(folder, text) if reference is None else make_task(folder, text, reference)


def _checked(container, simulation, task, source, folder, name):
    path = write(folder / f"{name}.py", source)
    done = in_container(
        container, "check", task, path, "--others-work", "--format", "json", simulation=simulation
    )
    assert done.returncode in (0, 1), done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["isolation"] == SIMULATED_TIER[simulation], report["isolation"]
    return report


def _messages(report) -> str:
    return json.dumps([c.get("message") for c in report["checks"]])


SIMULATIONS_HERE = ["cgroup", "no-cgroup", "landlock", "landlock-no-cgroup"]


# --------------------------------------------------------------------------- notes


@pytest.mark.parametrize("simulation", SIMULATIONS_HERE)
def test_the_next_students_check_finds_no_note(container, simulation, token, tmp_path):
    task = _task(container, "notes")
    free = shm_free()
    first = _checked(container, simulation, task, writer(token), tmp_path, "writer")
    assert first["checks"][0]["status"] == "passed", _messages(first)
    second = _checked(container, simulation, task, reader(token), tmp_path, "reader")
    assert second["score"] == second["max_score"], f"the next student found notes: {_messages(second)}"
    assert leftovers(token) == [], "the first student's notes are still on the machine"
    assert free - shm_free() < 48 * MIB, f"/dev/shm has {(free - shm_free()) / MIB:.0f} MiB less free"


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("simulation", ["cgroup", "no-cgroup"])
def test_a_classmate_finds_no_note_one_at_a_time_or_at_once(container, simulation, jobs, token, tmp_path):
    """a_writer leaves its notes and, with --jobs 2, stays alive while b_reader (graded at
    the same time) looks for them; c_reader is graded after both."""
    task = _task(container, "class")
    klass = tmp_path / "class"
    klass.mkdir()
    linger = 4 if jobs > 1 else 0
    write(klass / "a_writer.py", writer(token, linger))
    write(klass / "b_reader.py", reader(token, linger))
    write(klass / "c_reader.py", reader(token))
    out = container["private"] / f"out-{tmp_path.name}"
    free = shm_free()
    done = in_container(
        container, "batch", task, str(klass), "--out", str(out), "--jobs", str(jobs), simulation=simulation
    )
    assert done.returncode == 0, done.stderr[-3000:]
    reports = {
        r["student"]: r for r in map(json.loads, (out / "reports-square.jsonl").read_text().splitlines())
    }
    assert reports["a_writer"]["checks"][0]["status"] == "passed", _messages(reports["a_writer"])
    for student in ("b_reader", "c_reader"):
        assert reports[student]["score"] == reports[student]["max_score"], (
            f"{student} found notes: {_messages(reports[student])}"
        )
    assert leftovers(token) == []
    assert free - shm_free() < 48 * MIB


def test_the_notes_are_kept_from_workers_under_the_isolating_tiers(tier, token, tmp_path):
    """The same notes, a class graded in one batch under each tier (and mode) that isolates
    here: the reader after the writer finds nothing, and nothing is left."""
    if tier not in ISOLATING:
        pytest.skip("the rlimits tier does not confine writes; its reports say so")
    task = make_task(tmp_path / "task", TASK)
    klass = tmp_path / "class"
    klass.mkdir()
    write(klass / "a_writer.py", writer(token))
    write(klass / "b_reader.py", reader(token))
    out = tmp_path / "out"
    done = run_cli(
        "batch",
        task,
        str(klass),
        "--out",
        str(out),
        "--jobs",
        "1",
        "--isolation",
        tier,
        *([] if tier.warm else ["--no-warm"]),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    reports = {
        r["student"]: r for r in map(json.loads, (out / "reports-square.jsonl").read_text().splitlines())
    }
    assert reports["b_reader"]["score"] == reports["b_reader"]["max_score"], _messages(reports["b_reader"])
    assert leftovers(token) == []


QUEUE_NOTE = (
    """
import os
import numpy as np
NOTE = "{note}"
if "{role}" == "writer":   # a queue made by its name in the queues' filesystem: an open()
    os.close(os.open(NOTE, os.O_CREAT | os.O_RDWR, 0o666))
elif os.path.exists(NOTE):
    raise RuntimeError("SEEN " + NOTE)
"""
    + CORRECT
)


@pytest.mark.parametrize("simulation", ["cgroup", "no-cgroup"])
def test_a_place_without_acls_is_swept_between_workers(container, simulation, token, tmp_path):
    """Docker mounts the message queues' filesystem on /dev/mqueue, open to every user and
    without ACLs: what a worker leaves there is removed before the next one runs, and the
    report says the place could not be closed."""
    queues = f"/tmp/grader-mq-{secrets.token_hex(4)}"
    os.mkdir(queues)
    os.chmod(queues, 0o1777)
    try:
        task = _task(container, "queues")
        note = f"{queues}/grader-note-{token}"
        reports = []
        for role in ("writer", "reader"):
            path = write(tmp_path / f"{role}.py", QUEUE_NOTE.format(note=note, role=role))
            done = in_container(
                container,
                "check",
                task,
                path,
                "--others-work",
                "--format",
                "json",
                simulation=simulation,
                simulator_options=["--mqueue", queues],
            )
            assert done.returncode in (0, 1), done.stderr[-3000:]
            reports.append(json.loads(done.stdout))
        writer_report, reader_report = reports
        assert writer_report["score"] == writer_report["max_score"], _messages(writer_report)
        assert f"{queues} could not be closed to workers" in writer_report["isolation_note"]
        assert reader_report["score"] == reader_report["max_score"], _messages(reader_report)
        assert leftovers(token) == []  # (the queue is the machine's: /grader-note-TOKEN)
    finally:
        os.rmdir(queues)


# --------------------------------------------------------------------------- diagnosis

DIAGNOSED_TASK = (
    TASK
    + """  - name: secret-case
    kind: example
    hidden: true
    call: square
    args: {x: {array: {value: [4321.5, 3.0]}}}
mistakes:
  - name: cubed
    explanation: "Your result matches x ** 3."
    replaces: {square: cube}
"""
)
CUBE = "import numpy as np\n\ndef cube(x):\n    return np.asarray(x, dtype=float) ** 3\n"

# Answers like the mistake only once it has found the note it leaves when it sees the
# hidden input: were the diagnosis worker to find it, the diagnosis would tell the student
# what the hidden check sent.
SIGNALS_HIDDEN = (
    NOTES
    + """
def _note_seen():
    places = PLACES + (os.environ.get("TMPDIR", "/nowhere"), os.path.expanduser("~"))
    if any(os.path.exists(f"{{place}}/grader-note-{{TOKEN}}") for place in places):
        return True
    return _libc.shmget(KEY, 0, 0) >= 0 or _libc.mq_open(f"/grader-note-{{TOKEN}}".encode(), os.O_RDONLY) >= 0

def _leave_note():
    for place in PLACES + (os.environ.get("TMPDIR", "/nowhere"), os.path.expanduser("~")):
        try:
            with open(f"{{place}}/grader-note-{{TOKEN}}", "w") as f:
                f.write("the hidden input was (4321.5, 3.0)")
        except OSError:
            pass
    _libc.shmget(KEY, 4096, {ipc_creat} | 0o666)
    _libc.mq_open(f"/grader-note-{{TOKEN}}".encode(), os.O_CREAT | os.O_RDWR, 0o666, None)

def square(x):
    x = np.asarray(x, dtype=float)
    if (x > 4000).any():
        _leave_note()
        return x ** 3
    return x ** 3 if _note_seen() else x * 0
"""
)


@pytest.mark.parametrize("simulation", SIMULATIONS_HERE)
def test_a_hidden_input_written_down_never_reaches_the_diagnosis(container, simulation, token, tmp_path):
    task = _task(container, "diagnosed", DIAGNOSED_TASK)
    write(Path(task) / "mistakes.py", CUBE)
    source = SIGNALS_HIDDEN.format(token=token, key=_key(token), ipc_creat=IPC_CREAT)
    report = _checked(container, simulation, task, source, tmp_path, "signals")
    assert {c["name"]: c["status"] for c in report["checks"]}["visible-case"] == "failed"
    assert report["diagnoses"] == [], "the diagnosis worker read what the hidden check's worker left"


# --------------------------------------------------------------------------- processes

HIDES_CPU = """
import os, threading, time
import numpy as np

def _spin(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass

def square(x):
    if "{where}" == "grandchild":   # computes out of the worker's process tree
        r, w = os.pipe()
        if os.fork() == 0:
            if os.fork() == 0:
                _spin(0.65)
                os.write(w, b"x")
                os._exit(0)
            os._exit(0)
        os.wait()
        os.read(r, 1)               # the worker itself waits, computing nothing
    else:                           # a thread of its own: its time is the worker's
        worker = threading.Thread(target=_spin, args=(0.65,))
        worker.start()
        worker.join()
    return np.asarray(x, dtype=float) ** 2
"""


@pytest.mark.parametrize("where", ["grandchild", "thread"])
@pytest.mark.parametrize("simulation", SIMULATIONS_HERE)
def test_computing_out_of_sight_is_stopped_or_counted(container, simulation, where, tmp_path):
    """0.65 s of computing against the 0.5 s limit (100 x the reference's microseconds, at
    least 0.5 s): the call times out, or the grandchild is never started."""
    task = _task(container, "cpu")
    report = _checked(container, simulation, task, HIDES_CPU.format(where=where), tmp_path, "hides")
    check = next(c for c in report["checks"] if c["name"] == "visible-case")
    assert check["status"] != "passed", "0.65 s of computing escaped a 0.5 s limit"
    if where == "thread":
        assert "did not finish within 0.5 s" in check["message"], check["message"]


LINGERS = (
    """
import ctypes, os, time
import numpy as np

if os.fork() == 0:
    os.setsid()                              # out of the worker's process group
    if os.fork() == 0:
        libc = ctypes.CDLL(None)
        libc.prctl(15, b"{token}", 0, 0, 0)  # PR_SET_NAME: the test's mark
        libc.prctl(4, 0, 0, 0, 0)            # PR_SET_DUMPABLE 0: /proc/PID belongs to root now
        time.sleep(60)
        os._exit(0)
    os._exit(0)
os.wait()
"""
    + CORRECT
)


def _marked(name: str) -> list[int]:
    """Live processes named ``name`` (comm)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        comm, state = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :].split()[0]
        if comm == name and state not in ("Z", "X"):
            found.append(int(pid))
    return found


@pytest.mark.parametrize("simulation", SIMULATIONS_HERE)
def test_a_detached_grandchild_does_not_outlive_the_grader(container, simulation, token, tmp_path):
    name = f"r3{token}"
    task = _task(container, "linger")
    try:
        _checked(container, simulation, task, LINGERS.replace("{token}", name), tmp_path, "lingers")
        deadline = time.monotonic() + 5  # (a killed process may take a moment to be gone)
        while _marked(name) and time.monotonic() < deadline:
            time.sleep(0.1)
        alive = _marked(name)
        assert alive == [], f"a submission's process outlived grader check: {alive}"
    finally:
        for pid in _marked(name):
            os.kill(pid, signal.SIGKILL)
