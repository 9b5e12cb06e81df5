"""Helpers for tests of the grader as it ships: its sdist, and fresh (non-editable) installs."""

import os
import shutil
import subprocess
import sys
import sysconfig

from helpers.paths import ROOT

_NOT_SHIPPED = shutil.ignore_patterns(
    ".git", ".venv", "*.egg-info", "build", "dist", "__pycache__", ".pytest_cache", ".hypothesis", "out"
)


def build_sdist(tmp) -> str:
    """``python -m build --sdist`` of a copy of this tree (the build writes egg-info beside
    the sources; the copy keeps the checkout clean). Returns the tarball's path."""
    source = os.path.join(tmp, "source")
    shutil.copytree(ROOT, source, ignore=_NOT_SHIPPED, symlinks=True)
    out = os.path.join(tmp, "dist")
    done = subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--outdir", out, source],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [name] = os.listdir(out)
    return os.path.join(out, name)


def fresh_venv(folder) -> str:
    """A new venv that sees this interpreter's installed packages (numpy...) through a .pth
    file, so installing the grader into it needs no download of its dependencies; a .pth
    line adds a folder without running that folder's own .pth files, so an editable
    grader installed here stays invisible there. Returns its python."""
    subprocess.run([sys.executable, "-m", "venv", folder], check=True, timeout=300)
    python = os.path.join(folder, "bin", "python")
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    with open(os.path.join(purelib, "zz_deps_from_the_test_runner.pth"), "w") as f:
        f.write(sysconfig.get_paths()["purelib"] + "\n")
    return python


def pip_install(python, *args) -> None:
    done = subprocess.run(
        [python, "-m", "pip", "install", "-q", "--no-deps", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=clean_env(),
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def clean_env(**extra) -> dict:
    """The environment without the test runner's PYTHONPATH (it points at this checkout)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(extra)
    return env
