"""``grader gradescope TASK [TASK ...] -o autograder.zip``: a Gradescope autograder for one
task, or for several (one assignment of several questions: one results.json, each test
named after its task, the scores summed).

The zip holds the task folders (``tasks/<id>/``), a wheel of the grader being run and
``requirements.txt`` (the versions installed here, or the newest that install on the
Python of Gradescope's image where those do not: self_package.py, target_pins.py), ``setup.sh`` (Gradescope runs it once when it
builds the image: installs Python, bubblewrap where the image allows, the pinned
dependencies and the grader), ``run_autograder`` (run per submission: grades
/autograder/submission against each task, the file of it the instructor named for that task,
each task under its share of the time limit) and ``finish_results.py`` (gradescope_finish.py:
the one writer of results.json, which merges the tasks' results). Both scripts honour
``AUTOGRADER_ROOT`` so they can be tried on a fake tree. The zip is written to a temp file
and renamed: a failure leaves no partial zip.
"""

from __future__ import annotations

import os
import shlex
import zipfile
from dataclasses import dataclass

from grader.disk import write_whole
from grader.integrations import gradescope_finish, self_package, target_pins
from grader.task import frameworks
from grader.task.spec import Task

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image.
set -euo pipefail
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
SOURCE="$ROOT/source"
if command -v apt-get >/dev/null 2>&1; then
  apt-get update
  apt-get install -y python3 python3-venv python3-pip libseccomp2
  apt-get install -y bubblewrap || echo "no bubblewrap: grading will use a weaker sandbox tier"
fi
FOR="{python}"   # the Python the pins were made for (grader gradescope --python)
HAVE="$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || echo none)"
if [ "$HAVE" != "$FOR" ]; then
  echo "setup.sh: warning: this zip was made for Python $FOR, this image has $HAVE" >&2
fi
python3 -m venv "$SOURCE/.venv"
# The pinned versions (requirements.txt says which and why), then the grader itself.
if ! "$SOURCE/.venv/bin/pip" install {binary}-r "$SOURCE/requirements.txt" "$SOURCE/{wheel}"; then
  echo "setup.sh: installing the pinned requirements failed. The zip was made for Python" \\
       "$FOR; this image has $HAVE. Choose a base image with Python $FOR, or build the zip" \\
       "again with grader gradescope --python $HAVE." >&2
  exit 1
fi
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for every submission. Whatever happens (a grade, a bad spec, a crash,
# a timeout, a grader killed by the submission), it leaves a results.json written from here,
# atomically, by finish_results.py, and exits 0; never exit 0 without one.
ROOT="${AUTOGRADER_ROOT:-/autograder}"
SOURCE="$ROOT/source"
PYTHON="${GRADER_PYTHON:-$SOURCE/.venv/bin/python}"
RESULTS="$ROOT/results"
LIMIT="${GRADER_TIMEOUT:-540}"   # seconds, all tasks together; below Gradescope's default 10 minutes
case "$LIMIT" in ''|*[!0-9]*) LIMIT=540 ;; esac
START=$SECONDS
# The tasks this zip grades, in order, and the file of the upload each one grades ('': the
# upload's only hand-in file, or the one named solution, submission or main).
TASKS=(@TASKS@)
FILES=(@FILES@)
rm -f "$RESULTS/results.json"    # a stale or forged file never survives a failed run
mkdir -p "$RESULTS"
# Where neither bubblewrap nor Landlock works (Gradescope's Docker, as root), the worker runs
# as a user of its own and file permissions are its walls: the tasks (and their references)
# and the results must be closed to other users, or the grader refuses to grade.
chmod -R o-rwx "$SOURCE/tasks" 2>/dev/null
chmod o-w "$RESULTS" 2>/dev/null
# grader check writes its reports in a private folder, never in results/ itself.
WORK="$(mktemp -d 2>/dev/null || echo "$ROOT/.grader-work-$$")"
mkdir -p "$WORK" && chmod 700 "$WORK"
RUNS=()
for i in "${!TASKS[@]}"; do
  task="${TASKS[$i]}"
  REPORT="$WORK/$task.json"
  ERRORS="$WORK/$task.stderr.txt"
  FILE=()
  if [ -n "${FILES[$i]}" ]; then FILE=(--file "${FILES[$i]}"); fi
  TIMEOUT=()
  if command -v timeout >/dev/null 2>&1; then
    # what is left of the limit, shared by the tasks left: one that loops costs its share only
    share=$(( (LIMIT - (SECONDS - START)) / (${#TASKS[@]} - i) ))
    if [ "$share" -lt 1 ]; then share=1; fi
    TIMEOUT=(timeout -k 10 "$share")
  fi
  # --others-work: never the rlimits tier, in which a submission could read the task.
  "${TIMEOUT[@]}" "$PYTHON" -m grader check "$SOURCE/tasks/$task" "$ROOT/submission" "${FILE[@]}" \\
      --others-work --format gradescope --output "$REPORT" 2>"$ERRORS"
  RUNS+=(--task "$task" "$?" "$REPORT" "$ERRORS")
  cat "$ERRORS" 2>/dev/null | tail -c 20000 >&2   # run_autograder's output: instructors only
done
for python in "$PYTHON" python3; do
  "$python" -I "$SOURCE/finish_results.py" "${RUNS[@]}" --results "$RESULTS" \\
      --seconds "$((SECONDS - START))" --timeout "$LIMIT" && break
done
rm -rf "$WORK"
if [ ! -f "$RESULTS/results.json" ]; then
  # No Python at all: a fixed results.json, renamed into place.
  printf '%s\\n' '{"score": 0.0, "output": "The autograder could not grade this submission; your instructor has been told.", "output_format": "text", "stdout_visibility": "hidden", "extra_data": {"grader_error": "no Python could write the results (see the autograder output)"}, "tests": []}' \\
      >"$RESULTS/.results-fallback.json" && mv -f "$RESULTS/.results-fallback.json" "$RESULTS/results.json"
  echo "run_autograder: no Python could write results.json"
fi
[ -f "$RESULTS/results.json" ] || exit 1
exit 0
"""


@dataclass(frozen=True)
class Part:
    """A task of the zip and the file of the upload it grades (None: the upload's only
    hand-in, or the one named solution, submission or main)."""

    task: Task
    file: str | None = None


def run_autograder(parts: list[Part]) -> str:
    """run_autograder for these tasks (ids are ``[a-z0-9-]`` by the schema, file names plain
    by submission/file.py's name_problem: quoted all the same)."""
    tasks = " ".join(shlex.quote(p.task.id) for p in parts)
    files = " ".join(shlex.quote(p.file or "") for p in parts)
    return RUN_AUTOGRADER.replace("@TASKS@", tasks, 1).replace("@FILES@", files, 1)


def _add(archive: zipfile.ZipFile, name: str, data: str | bytes, executable: bool = False) -> None:
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
    info.external_attr = (0o755 if executable else 0o644) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, data)


def _add_tree(archive: zipfile.ZipFile, folder: str, prefix: str) -> None:
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        for name in sorted(files):
            if name.endswith((".pyc", ".pyo")):
                continue
            path = os.path.join(root, name)
            archive.write(path, os.path.join(prefix, os.path.relpath(path, folder)))


def _finish_source() -> str:
    with open(gradescope_finish.__file__, encoding="utf-8") as f:
        return f.read()


def framework_extras(tasks: list[Task]) -> tuple[tuple[str, ...], list[str]]:
    """The grader's extras the zip installs for the frameworks the tasks allow (those
    installed here, whose versions it pins), and a note for each allowed one that is not:
    on Gradescope its hand-ins would get the environment message."""
    extras: list[str] = []
    notes: list[str] = []
    for task in tasks:
        for framework in frameworks.allowed_frameworks(task.allowed_imports):
            if frameworks.installed(framework):
                if framework.extra not in extras:
                    extras.append(framework.extra)
                continue
            note = (
                f"the task allows {framework.label} ('{framework.module}'), which is not "
                f"installed here, so the zip will not install it and its hand-ins will "
                f"be told the grading environment lacks it: pip install "
                f"'numgrader[{framework.extra}]' and build the zip again"
            )
            if note not in notes:
                notes.append(note)
    return tuple(extras), notes


def build(
    parts: list[Part],
    output: str,
    python: str = target_pins.DEFAULT_PYTHON,
    index: str | None = target_pins.DEFAULT_INDEX,
) -> list[str]:
    """The zip of ``parts`` at ``output``, its pins made to install on ``python`` as the
    package ``index`` has them (None: the versions installed here, unchecked). Raises
    self_package.NotInstalled when the grader has no installed metadata, and
    target_pins.PinsRefused when the pins cannot install on that Python (nothing written
    then). Returns notes for the instructor (pins changed for that Python, frameworks the
    tasks allow that the zip cannot install)."""
    dist = self_package.distribution()
    extras, notes = framework_extras([p.task for p in parts])
    wheel = f"wheels/{self_package.wheel_name(dist)}"
    wheel_data = self_package.wheel_bytes(dist)
    pins = self_package.pinned_requirements(dist, extras)
    if index is not None:
        chosen = target_pins.resolve(
            pins,
            wheel_data,
            self_package.wheel_name(dist),
            extras,
            python,
            index,
            self_package.extra_index(pins),
        )
        pins = chosen.lines
        notes = chosen.changed + notes
    requirements = self_package.requirements_text(dist, extras, pins, python if index is not None else "")
    setup = SETUP_SH.format(wheel=wheel, python=python, binary="--only-binary=:all: " if index else "")
    folder = os.path.dirname(os.path.abspath(output))
    os.makedirs(folder, exist_ok=True)
    with (
        write_whole(output, permissions=0o644, exact=True, suffix=".zip.part") as f,
        zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as archive,
    ):
        _add(archive, "setup.sh", setup, executable=True)
        _add(archive, "run_autograder", run_autograder(parts), executable=True)
        _add(archive, "finish_results.py", _finish_source())
        _add(archive, "requirements.txt", requirements)
        _add(archive, wheel, wheel_data)
        for part in parts:
            _add_tree(archive, part.task.folder, f"tasks/{part.task.id}")
    return notes
