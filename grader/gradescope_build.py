"""``grader gradescope TASK -o autograder.zip``: a Gradescope autograder for one task.

The zip holds the task folder, the grader's own source, ``setup.sh`` (Gradescope runs it
once when it builds the image: installs Python, bubblewrap where the image allows, and the
grader) and ``run_autograder`` (run per submission: grades /autograder/submission into
/autograder/results/results.json). The root is overridable (``AUTOGRADER_ROOT``) so the
very same script can be tried on a fake tree.
"""
from __future__ import annotations

import os
import zipfile

from .spec import Task

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image.
set -euo pipefail
apt-get update
apt-get install -y python3 python3-venv python3-pip
apt-get install -y bubblewrap || echo "no bubblewrap: grading will use the landlock or rlimits tier"
python3 -m venv /autograder/source/.venv
/autograder/source/.venv/bin/pip install /autograder/source/grader-src
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for every submission; it must leave results/results.json.
ROOT="${AUTOGRADER_ROOT:-/autograder}"
PYTHON="${GRADER_PYTHON:-$ROOT/source/.venv/bin/python}"
mkdir -p "$ROOT/results"
cd "$ROOT/source/grader-src" || exit 2
"$PYTHON" -m grader check "$ROOT/source/task" "$ROOT/submission" \\
    --format gradescope --output "$ROOT/results/results.json"
code=$?
# 1 means below full marks: a grade, not a failure of the autograder.
if [ "$code" -le 1 ]; then exit 0; fi
exit "$code"
"""


def _add(archive: zipfile.ZipFile, name: str, text: str, executable: bool = False) -> None:
    info = zipfile.ZipInfo(name)
    info.external_attr = (0o755 if executable else 0o644) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, text)


def _add_tree(archive: zipfile.ZipFile, folder: str, prefix: str) -> None:
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        for name in sorted(files):
            if name.endswith((".pyc", ".pyo")):
                continue
            path = os.path.join(root, name)
            archive.write(path, os.path.join(prefix, os.path.relpath(path, folder)))


def build(task: Task, output: str) -> None:
    folder = os.path.dirname(os.path.abspath(output))
    os.makedirs(folder, exist_ok=True)
    with zipfile.ZipFile(output, "w", zipfile.ZIP_DEFLATED) as archive:
        _add(archive, "setup.sh", SETUP_SH, executable=True)
        _add(archive, "run_autograder", RUN_AUTOGRADER, executable=True)
        _add_tree(archive, task.folder, "task")
        _add_tree(archive, os.path.join(PACKAGE_ROOT, "grader"), "grader-src/grader")
        for name in ("pyproject.toml", "README.md"):
            archive.write(os.path.join(PACKAGE_ROOT, name), f"grader-src/{name}")
