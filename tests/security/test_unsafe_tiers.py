"""No unsafe tier by accident (issue 16): grading someone else's work never runs in the
rlimits tier, every fall below bubblewrap is said, and where neither bubblewrap nor
Landlock works but the grader is root (Gradescope), workers run as a user of their own.

The Gradescope container is simulated here (tests/helpers/container_sim.py): root, Docker's
default seccomp profile (no namespaces, no Landlock), and the grader installed the normal
way (not editable) into a virtualenv of the system's Python that every user may read, as
Gradescope's setup does.
"""

import json
import os
import shutil
from pathlib import Path

import pytest
from helpers.cli import run_cli
from helpers.containers import in_container
from helpers.paths import PE_SAMPLES, PE_TASK
from helpers.tasks import score_without, write
from helpers.tiers import BUBBLEWRAP, LANDLOCK, tier_works

# Tries what a hostile file did to Gradescope's run_autograder in the rlimits tier: read
# the reference, forge the results, kill the grader. Reading the reference is reported as
# an error at import, so the score says whether it worked; forged.json says whether the
# results folder could be written.
ATTACK = """
import os
import signal
import numpy as np

_task = {task!r}
for _name in ("results.json", "forged.json"):
    try:
        with open(os.path.join({results!r}, _name), "w") as f:
            f.write('{{"score": 999}}')
    except OSError:
        pass
try:
    with open(os.path.join(_task, "reference.py")) as f:
        _stolen = f.read()
except OSError:
    _stolen = None
if _stolen is not None:
    raise RuntimeError("read the reference: " + str(len(_stolen)) + " bytes")
try:
    os.kill(os.getppid(), signal.SIGKILL)
except OSError:
    pass
""" + open(os.path.join(PE_SAMPLES, "correct_vectorized.py")).read()


def test_the_container_offers_neither_bubblewrap_nor_landlock(container, simulation):
    probe = in_container(
        container,
        "-c",
        "from grader.sandbox import choose_tier, tier; from grader.sandbox "
        "import cgroup; print(tier('bubblewrap').works(), tier('landlock').works(), "
        "choose_tier('auto', True), cgroup.available())",
        simulation=simulation,
        command="python",
    )
    assert probe.stdout.split() == ["False", "False", "unprivileged", str(simulation == "cgroup")], (
        probe.stderr[-2000:]
    )


def test_a_hostile_file_in_the_container_reads_nothing_forges_nothing_kills_nothing(
    container, simulation, tmp_path
):
    results = Path(container["open"]) / f"results-{tmp_path.name}"  # like /autograder/results: open,
    results.mkdir(mode=0o755)  # not writable
    attack = write(
        container["private"] / "attack.py", ATTACK.format(task=container["task"], results=str(results))
    )
    os.chmod(container["private"], 0o755)  # the submission's folder may be open; the task not
    os.chmod(container["task"], 0o700)
    out = results / "results.json"
    done = in_container(
        container,
        "check",
        container["task"],
        attack,
        "--others-work",
        "--format",
        "gradescope",
        "-o",
        str(out),
        simulation=simulation,
    )
    assert done.returncode == 1, done.stderr[-3000:]  # graded, below full marks
    report = json.loads(out.read_text())
    # It loaded (so the reference was out of reach) and lost only what its imports cost:
    # the import policy, and the mutation check that os could fool.
    lost = {t["name"].split(":")[0] for t in report["tests"] if t["status"] != "passed"}
    assert lost == {"numpy-only", "add-leaves-input-unchanged"}, report
    assert report["score"] == score_without(*lost)
    assert not (results / "forged.json").exists()
    # (how it was graded is for instructors: extra_data and a hidden test, not the output)
    assert "unprivileged" not in report["output"]
    assert report["extra_data"]["isolation"] == "unprivileged"
    assert "not bubblewrap" in report["extra_data"]["isolation_note"]
    assert "note: graded in the unprivileged tier" in done.stderr


def test_the_same_attack_succeeds_in_the_rlimits_tier(tmp_path):
    """The control: where nothing but limits stands between them, the file reads the
    reference (so the test above can fail)."""
    results = tmp_path / "results"
    results.mkdir()
    attack = write(
        tmp_path / "attack.py",
        ATTACK.replace("os.kill(os.getppid(), signal.SIGKILL)", "pass").format(
            task=PE_TASK, results=str(results)
        ),
    )
    done = run_cli("check", PE_TASK, attack, "--isolation", "rlimits", "--format", "json")
    report = json.loads(done.stdout)
    assert report["score"] == 0 and "read the reference" in json.dumps(report)
    assert (results / "forged.json").exists()


def test_open_task_folders_are_refused_in_the_unprivileged_tier(container, simulation, tmp_path):
    open_task = os.path.join(container["open"], f"open-task-{tmp_path.name}")  # every user may read it
    shutil.copytree(container["task"], open_task)
    os.chmod(open_task, 0o755)
    sample = os.path.join(PE_SAMPLES, "correct_vectorized.py")
    done = in_container(container, "check", open_task, sample, "--others-work", simulation=simulation)
    assert done.returncode == 2
    assert f"chmod -R o-rwx {open_task}" in done.stderr, done.stderr


def test_others_work_is_never_graded_in_the_rlimits_tier(tmp_path):
    sample = os.path.join(PE_SAMPLES, "correct_vectorized.py")
    for args in (
        ["check", PE_TASK, sample, "--others-work", "--isolation", "rlimits"],
        ["batch", PE_TASK, PE_SAMPLES, "--out", str(tmp_path / "out"), "--isolation", "rlimits"],
    ):
        done = run_cli(*args)
        assert done.returncode == 2, done.stderr[-2000:]
        assert "refused in the rlimits tier" in done.stderr
    assert not list((tmp_path / "out").glob("grades*.csv")) if (tmp_path / "out").exists() else True
    # A student checking their own file may still use it, and is told what it means.
    done = run_cli("check", PE_TASK, sample, "--isolation", "rlimits")
    assert done.returncode == 0
    assert "note: graded in the rlimits tier" in done.stderr


@pytest.mark.skipif(not tier_works(BUBBLEWRAP) or not tier_works(LANDLOCK), reason="needs both tiers")
def test_a_fall_below_bubblewrap_is_said(tmp_path):
    sample = os.path.join(PE_SAMPLES, "correct_vectorized.py")
    strong = run_cli("check", PE_TASK, sample, "--format", "json")
    assert "note:" not in strong.stderr and json.loads(strong.stdout)["isolation_note"] == ""
    weaker = run_cli("check", PE_TASK, sample, "--isolation", "landlock", "--format", "json")
    note = json.loads(weaker.stdout)["isolation_note"]
    assert note.startswith("graded in the landlock tier") and "note: " + note in weaker.stderr


def test_a_class_is_graded_in_the_container(container, simulation, tmp_path):
    """A batch in the container: fresh workers of the unprivileged tier (no warm server
    there), a classmate's file out of reach."""
    klass = container["private"] / f"class-{tmp_path.name}"
    klass.mkdir()
    shutil.copy(os.path.join(PE_SAMPLES, "correct_vectorized.py"), klass / "alice.py")
    (klass / "mallory.py").write_text(
        f"with open({str(klass / 'alice.py')!r}) as f:   # the classmate's file, by its path\n"
        f"    f.read()\n" + open(os.path.join(PE_SAMPLES, "correct_vectorized.py")).read()
    )
    out = container["private"] / f"out-{tmp_path.name}"
    done = in_container(
        container,
        "batch",
        container["task"],
        str(klass),
        "--out",
        str(out),
        "--jobs",
        "2",
        simulation=simulation,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    reports = {
        json.loads(line)["student"]: json.loads(line)
        for line in (out / "reports-positional-encoding.jsonl").read_text().splitlines()
    }
    assert reports["alice"]["score"] == score_without() and reports["alice"]["isolation"] == "unprivileged"
    assert reports["mallory"]["status"] == "error"  # it could not read alice's file
    assert "PermissionError" in json.dumps(reports["mallory"])
