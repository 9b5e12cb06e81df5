"""Student kits: what students may hold of a task, and nothing else.

``grader kit TASK -o DIR`` writes ``DIR/<task id>/``: the statement, a ``task.yaml``
without the hidden checks (absent, not redacted: no name, input or value of one) and
without the reference (nor its known mistakes), and a freeze of the public checks' cases and expected outputs,
taken from the task's own freeze so the kit grades exactly as the full task does. A kit
has no reference: a failure shows the smallest failing frozen case (checks try them
smallest first, case_size.py), and the report says hidden checks may be added at final
grading.
"""
from __future__ import annotations

import os
import shutil

import yaml

from . import frozen
from .reference import load_reference
from .spec import SpecError, Task

HEADER = ("# Student kit of task {id} (version {version}), made by `grader kit`: the public\n"
          "# checks only. Hidden checks may be added at final grading.\n")


def make_kit(task: Task, out_dir: str) -> str:
    """Write the kit of ``task`` under ``out_dir``; returns its folder."""
    if frozen.load(task) is None:
        raise SpecError([f"{task.folder}: not frozen; a kit is cut from the task's frozen cases, "
                         f"so that it grades exactly as the task does. Run: grader freeze {task.folder}"])
    if os.path.isfile(task.reference_path) is False:
        raise SpecError([f"{task.folder}: has no reference; a kit is made from the full task"])
    with open(task.spec_path, encoding="utf-8") as f:
        spec = yaml.safe_load(f)
    spec["checks"] = [c for c in spec["checks"] if not c.get("hidden", False)]
    spec.pop("reference", None)
    spec.pop("mistakes", None)   # mistakes.py is near-reference code: a kit has neither
    statement = os.path.basename(task.statement_path)
    spec["statement"] = statement
    public = [c for c in task.checks if not c.hidden]
    folder = os.path.join(out_dir, task.id)
    staging = folder + ".partial"
    shutil.rmtree(staging, ignore_errors=True)
    os.makedirs(staging)
    try:
        shutil.copyfile(task.statement_path, os.path.join(staging, statement))
        spec_path = os.path.join(staging, "task.yaml")
        with open(spec_path, "w", encoding="utf-8") as f:
            f.write(HEADER.format(id=task.id, version=task.version))
            yaml.safe_dump(spec, f, sort_keys=False, allow_unicode=True)
        frozen.freeze(task, load_reference(task), only=public, out_folder=staging,
                      spec_path=spec_path, kit=True)
        shutil.rmtree(folder, ignore_errors=True)
        os.replace(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return folder
