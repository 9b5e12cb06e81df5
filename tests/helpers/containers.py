"""Gradescope's container, simulated: the grader installed in a virtualenv of the system's
Python (``simulated_container``, behind conftest.py's ``container`` fixtures) and commands
run in it under helpers/container_sim.py (``in_container``)."""

import os
import shutil
import subprocess
import tempfile

import pytest

from helpers.paths import PE_TASK, ROOT
from helpers.tiers import LANDLOCK, UNPRIVILEGED

SYSTEM_PYTHON = "/usr/bin/python3"
SIMULATOR = os.path.join(ROOT, "tests", "helpers", "container_sim.py")
# Gradescope's container as tests/helpers/container_sim.py makes it: with the machine's cgroups
# writable, or read-only as Docker mounts them by default; and a newer Docker that lets
# Landlock through (no namespaces still). The tier each one leaves the grader.
SIMULATIONS = {
    "cgroup": [],
    "no-cgroup": ["--no-cgroup"],
    "landlock": ["--landlock"],
    "landlock-no-cgroup": ["--landlock", "--no-cgroup"],
}
SIMULATED_TIER = {
    "cgroup": UNPRIVILEGED,
    "no-cgroup": UNPRIVILEGED,
    "landlock": LANDLOCK,
    "landlock-no-cgroup": LANDLOCK,
}


def in_container(
    container, *args, simulation="cgroup", cwd=None, timeout=300, command="grader", simulator_options=()
):
    """Run ``grader ARGS`` (or another program of the container's venv) in the simulation
    (with more of container_sim.py's options, ``simulator_options``)."""
    program = os.path.join(container["bin"], command)
    return subprocess.run(
        [
            os.path.join(container["bin"], "python"),
            SIMULATOR,
            *SIMULATIONS[simulation],
            *simulator_options,
            program,
            *args,
        ],
        capture_output=True,
        text=True,
        cwd=cwd or "/",
        timeout=timeout,
    )


def simulated_container(tmp_path_factory, extras):
    """A normal install of the grader (with ``extras``) in a virtualenv any user may read,
    and a private folder (like /autograder/source) holding the task; removed when the
    generator is closed. Skips without root or the system's Python."""
    if os.geteuid() != 0 or not os.path.exists(SYSTEM_PYTHON):
        pytest.skip("the simulation needs root and the system's Python, as Gradescope has")
    base = tempfile.mkdtemp(prefix="grader-container-")
    os.chmod(base, 0o755)
    venv = os.path.join(base, "venv")
    made = subprocess.run([SYSTEM_PYTHON, "-m", "venv", venv], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.fail(
            f"cannot make a virtualenv of {SYSTEM_PYTHON} (Debian: apt-get install "
            f"python3-venv): {made.stderr[-500:]}"
        )
    wanted = ROOT + (f"[{','.join(extras)}]" if extras else "")
    installed = subprocess.run(
        [os.path.join(venv, "bin", "pip"), "install", "-q", wanted], capture_output=True, text=True, cwd=base
    )
    assert installed.returncode == 0, installed.stderr[-2000:]
    private = tmp_path_factory.mktemp("autograder")  # pytest's folders are 0700
    shutil.copytree(PE_TASK, private / "task")
    yield {
        "bin": os.path.join(venv, "bin"),
        "task": str(private / "task"),
        "private": private,
        "open": base,
        "frameworks": [e for e in extras if e in ("tensorflow", "torch")],
    }
    shutil.rmtree(base, ignore_errors=True)
