"""One score everywhere: a file that probes its environment gets the same score from
`grader check` (a fresh worker), `grader batch` (warm workers, where the tier has them),
`grader batch --no-warm` and `grader ci`, in every tier that works here. Each probe below
answers right only where what it probes holds, so any difference between the workers'
file systems, limits or system calls between commands is a difference in score; and the
probes print what they saw, which must read the same too."""

import json
import os
import shutil

import pytest
from helpers.cli import run_cli
from helpers.tasks import make_task, write
from helpers.tiers import RLIMITS, warm_tiers

SQUARE_YAML = """
id: square
title: Square
version: 1
functions:
  square: [x]
checks:
  - name: one-value
    kind: example
    call: square
    args: {x: {array: {value: [1.5, 2.0]}}}
  - name: many-values
    kind: property
    call: square
    cases: 5
    args: {x: {array: {shape: [{integers: {min: 1, max: 4}}]}}}
"""

# What each probe looks at, as an expression that raises where it is not allowed; the
# probe's square is right only where it does not raise (every one imports os, so the
# imports rule costs each the same).
PROBES = {
    "listdir-root": "os.listdir('/')",
    "listdir-tmp": "os.listdir('/tmp')",
    "listdir-cwd": "os.listdir('.')",
    "cwd-is-home-and-tmpdir": "os.getcwd() == os.path.expanduser('~') == tempfile.gettempdir() or 1 / 0",
    "proc-self-status": "open('/proc/self/status').read()",
    "proc-1-cmdline": "open('/proc/1/cmdline', 'rb').read()",
    "etc-passwd": "open('/etc/passwd').read()",
    "write-tmpdir": "open(os.path.join(tempfile.gettempdir(), 'probe'), 'w').write('x')",
    "write-tmp": "open('/tmp/probe', 'w').write('x')",
    "unix-socket": "socket.socket(socket.AF_UNIX).close()",
    "subprocess": "subprocess.run(['true'], check=True)",
    "fork": "os.waitpid(os.fork() or os._exit(0), 0)",
    "shared-memory": "shared_memory.SharedMemory(create=True, size=16).unlink()",
    "dev-shm": "os.listdir('/dev/shm')",
    "alloc-1500-mib": "bytearray(1500 << 20)",
    "file-80-mib": "open('big', 'wb').write(b'x' * (80 << 20))",
    "open-files-200": "[open(os.devnull) for _ in range(200)]",
    "threads-8": "[t.start() for t in [threading.Thread(target=lambda: None) for _ in range(8)]]",
}
PROBE = """
import os
import socket
import subprocess
import tempfile
import threading
from multiprocessing import shared_memory

import numpy as np

try:
    {expression}
    HOLDS = True
except BaseException as exc:
    HOLDS = False
    print("raised", type(exc).__name__)
print("holds", HOLDS, "env", sorted(os.environ))


def square(x):
    x = np.asarray(x, dtype=float)
    return x ** 2 if HOLDS else x ** 2 + 1
"""


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A frozen square task, a class of probes, and a course repository per probe."""
    root = tmp_path_factory.mktemp("one-score")
    task = make_task(root / "tasks" / "square", SQUARE_YAML)
    assert run_cli("freeze", task).returncode == 0
    klass = root / "class"
    klass.mkdir()
    for name, expression in PROBES.items():
        write(klass / f"{name}.py", PROBE.format(expression=expression))
    return root, task, klass


def _by_student(out):
    rows = {}
    with open(os.path.join(out, "reports-square.jsonl")) as f:
        for line in f:
            report = json.loads(line)
            rows[report["submission"].rsplit(".", 1)[0]] = (report["score"], report.get("output", ""))
    return rows


def _checked(task, path, tier):
    done = run_cli("check", task, str(path), "--isolation", tier, "--format", "json")
    assert done.returncode in (0, 1), done.stderr[-2000:]
    report = json.loads(done.stdout)
    return report["score"], report.get("output", "")


def _batch(task, klass, out, tier, *more):
    trusted = ["--trusted-submissions"] if tier == RLIMITS else []  # (others' work: never rlimits)
    done = run_cli("batch", task, str(klass), "--out", str(out), "--isolation", tier, *trusted, *more)
    assert done.returncode == 0, done.stderr[-2000:]
    return _by_student(out)


def _ci(root, klass, name, tier, tmp_path):
    repo = tmp_path / f"ci-{name}"
    shutil.copytree(root / "tasks", repo / "tasks")
    (repo / "solutions").mkdir()
    shutil.copy(klass / f"{name}.py", repo / "solutions" / "square.py")
    junit = tmp_path / f"{name}.xml"
    done = run_cli("ci", str(repo), "--isolation", tier, "--junit", str(junit))
    assert done.returncode in (0, 1), done.stderr[-2000:]
    import xml.etree.ElementTree as ET

    suite = ET.parse(junit).getroot().find("testsuite")
    return float(suite.find("properties/property").get("value").split("/")[0])


def test_one_score_from_every_command_in_every_tier(course, plain_tier, tmp_path):
    root, task, klass = course
    fresh = {name: _checked(task, klass / f"{name}.py", plain_tier) for name in PROBES}
    assert any(not holds for holds in ("holds True" in out for _, out in fresh.values()))  # (walls met)
    commands = {"batch --no-warm": _batch(task, klass, tmp_path / "cold", plain_tier, "--no-warm")}
    if plain_tier in warm_tiers():
        commands["batch"] = _batch(task, klass, tmp_path / "warm", plain_tier)
    for command, graded in commands.items():
        for name in PROBES:
            assert graded[name] == fresh[name], (command, name, graded[name], fresh[name])
    for name in PROBES:
        assert _ci(root, klass, name, plain_tier, tmp_path) == fresh[name][0], ("ci", name)


# In Gradescope's container (root in Docker, no namespaces: the unprivileged tier), with a
# writable cgroup and without: the probes of the file system, processes and sockets.
IN_THE_CONTAINER = ("listdir-root", "listdir-tmp", "write-tmp", "write-tmpdir", "unix-socket", "subprocess")


def test_one_score_in_gradescopes_container(course, container, simulation, tmp_path):
    from helpers.containers import in_container

    root, task, klass = course
    private = container["private"] / f"one-score-{simulation}"
    shutil.copytree(task, private / "square")
    (private / "class").mkdir()
    for name in IN_THE_CONTAINER:
        shutil.copy(klass / f"{name}.py", private / "class" / f"{name}.py")
    checked = {}
    for name in IN_THE_CONTAINER:
        done = in_container(
            container,
            "check",
            str(private / "square"),
            str(private / "class" / f"{name}.py"),
            "--format",
            "json",
            simulation=simulation,
        )
        assert done.returncode in (0, 1), done.stderr[-2000:]
        checked[name] = json.loads(done.stdout)["score"]
    out = private / "out"
    done = in_container(
        container,
        "batch",
        str(private / "square"),
        str(private / "class"),
        "--out",
        str(out),
        "--jobs",
        "2",
        simulation=simulation,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    batch = {name: score for name, (score, _) in _by_student(out).items()}
    assert batch == checked
