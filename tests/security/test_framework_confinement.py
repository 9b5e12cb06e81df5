"""What a framework needs of /proc and the machine is readable in a worker, and no more: a
hostile file that reaches for its own memory through /proc (the process's mem, a thread's
mem through /proc/thread-self or /proc/self/task, pagemap) or for another process's entries
gets nothing in any tier that isolates (bubblewrap, landlock, each with fresh and warm
workers), while the entries TensorFlow and PyTorch read (their own cmdline, maps, environ,
status; the machine's cpuinfo, meminfo, CPU list) stay readable, in every tier.

The probe is a function, so that what it could open comes back as data; it names /proc only
in strings built at run time (the static scan is not what is tested here)."""

import json
import os
import shutil

import pytest
from helpers.containers import in_container
from helpers.paths import ROOT
from helpers.tasks import make_task, write
from helpers.tiers import ISOLATING

from grader.authoring import load_task
from grader.grading.run import GradeOptions, grade

PROBE = """
import os

P = "/" + "pr" + "oc"


def probe(kind):
    me = str(os.getpid())
    tid = me   # the main thread's id is the process's
    paths = {
        "needed": [P + "/self/cmdline", P + "/self/maps", P + "/self/environ", P + "/self/status",
                   P + "/self/stat", P + "/cpuinfo", P + "/meminfo"],
        "forbidden": [P + "/self/mem", P + "/" + me + "/mem", P + "/thread-self/mem",
                      P + "/self/task/" + tid + "/mem", P + "/self/pagemap",
                      P + "/1/cmdline", P + "/1/environ", P + "/" + str(os.getppid()) + "/environ"],
    }[kind]
    opened = []
    for path in paths:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.read(fd, 1)
            opened.append(path.replace(me, "ME").replace(P, "/P"))
        except OSError:
            pass
        finally:
            os.close(fd)
    return ",".join(opened)
"""

TASK = """
id: proc-probe
title: What a worker can read of /proc
version: 1
functions:
  probe: [kind]
imports:
  allowed: [numpy]
  stdlib: [os]
checks:
  - name: needed
    kind: example
    call: probe
    args: {kind: needed}
    expect: "/P/self/cmdline,/P/self/maps,/P/self/environ,/P/self/status,/P/self/stat,/P/cpuinfo,/P/meminfo"
    points: 1
  - name: forbidden
    kind: example
    call: probe
    args: {kind: forbidden}
    expect: ""
    points: 1
"""


@pytest.fixture(scope="module")
def probe_task(tmp_path_factory):
    folder = make_task(
        tmp_path_factory.mktemp("proc") / "proc-probe",
        TASK,
        reference=PROBE.replace('"forbidden": [', '"forbidden": [] and ['),
    )
    return load_task(folder)


def test_a_worker_reads_what_frameworks_need_of_proc_and_nothing_else(tier, probe_task, tmp_path):
    path = write(tmp_path / "probe.py", PROBE)
    result = grade(probe_task, path, GradeOptions(isolation=str(tier), warm_workers=tier.warm))
    by_name = {c.name: c for c in result.checks}
    assert by_name["needed"].status == "passed", by_name["needed"].message
    if str(tier) in ISOLATING:
        assert by_name["forbidden"].status == "passed", by_name["forbidden"].message


# One correct TensorFlow file and one wrong PyTorch file, with the checks the mistake breaks.
CONTAINER_SAMPLES = [
    ("tensorflow", "pe-table-shape", "correct_tensorflow_tutorial.py", set()),
    ("torch", "pe-batch-sum", "mistake_torch_wrong_rows.py", {"adds-the-first-three-rows"}),
]


def test_frameworks_grade_in_the_gradescope_container(container, simulation, tmp_path):
    """Gradescope's container (the unprivileged tier), with a writable cgroup and without
    one (then a worker may start no process: the frameworks' thread pools still run)."""
    for framework, task_name, file_name, breaks in CONTAINER_SAMPLES:
        if framework not in container["frameworks"]:
            if os.environ.get("GRADER_REQUIRE_FRAMEWORKS") == "1":
                pytest.fail(f"{framework} is not installed here, so not in the container either")
            continue
        private = container["private"] / f"{task_name}-{simulation}-{tmp_path.name}"
        shutil.copytree(os.path.join(ROOT, "tasks", task_name), private / "task")
        shutil.copy(os.path.join(ROOT, "submissions", task_name, file_name), private / file_name)
        done = in_container(
            container,
            "check",
            str(private / "task"),
            str(private / file_name),
            "--others-work",
            "--format",
            "json",
            simulation=simulation,
        )
        assert done.returncode in (0, 1), done.stderr[-3000:]
        report = json.loads(done.stdout)
        lost = {c["name"] for c in report["checks"] if c["max_score"] and c["status"] != "passed"}
        assert report["isolation"] == "unprivileged"
        assert lost == breaks, (file_name, [(c["name"], c["message"]) for c in report["checks"]])
