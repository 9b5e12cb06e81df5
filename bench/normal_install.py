"""This checkout installed as a course installs it: a wheel in a virtualenv of its own.

The development install (`pip install -e .`) is not what a student or a course runs: its
modules are found through setuptools' editable finder (imported by every Python that
starts in the venv, the sandbox's workers included), and where PYTHONDONTWRITEBYTECODE is
set (as on these machines) no module is ever compiled ahead, so every run compiles the
grader from source. A wheel installed by pip has neither cost. The naive grader it is
measured against runs from installed packages too, so both sides are measured alike.

    from normal_install import normal_install
    grader = normal_install(work)  # the path of that install's `grader` script

The virtualenv borrows the development venv's packages (numpy, Hypothesis, ...) through a
path file: nothing is downloaded, and the versions are those the naive grader uses.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import sysconfig

from classes import ROOT


def normal_install(work: str) -> str:
    """A virtualenv in ``work`` with this checkout's wheel installed; its ``grader`` script."""
    source, wheels, venv = (os.path.join(work, name) for name in ("source", "wheel", "venv"))
    # built from a copy: a build leaves build/ behind, which a later build would reuse
    skipped = shutil.ignore_patterns(".git", ".venv", "build", "*.egg-info", "__pycache__", "results")
    shutil.copytree(ROOT, source, ignore=skipped)
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE, "check": True}
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            wheels,
            source,
        ],
        cwd=work,
        **quiet,
    )
    subprocess.run([sys.executable, "-m", "venv", venv], **quiet)
    site = subprocess.run(
        [os.path.join(venv, "bin", "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    with open(os.path.join(site, "development-packages.pth"), "w") as f:
        f.write(sysconfig.get_path("purelib") + "\n")  # (a plain path: its own .pth files are not read)
    (wheel,) = glob.glob(os.path.join(wheels, "*.whl"))
    # (its own pip: the script then runs its own Python; pip compiles the bytecode)
    subprocess.run(
        [os.path.join(venv, "bin", "python"), "-m", "pip", "install", "-q", "--no-deps", wheel], **quiet
    )
    script = os.path.join(venv, "bin", "grader")
    with open(script) as f:
        first = f.readline()
    if not first.startswith("#!") or venv not in first:
        sys.exit(f"{script} does not run the new virtualenv's Python ({first.strip()})")
    return script
