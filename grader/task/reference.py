"""Loads a task's trusted reference solution (instructor code: imported on the trusted side)."""

from __future__ import annotations

import copy
import importlib.util
import os
import sys
from types import ModuleType
from typing import Any

from grader.task.spec import SpecError, Task


def load_reference(task: Task) -> ModuleType | None:
    """Import ``reference.py`` (the prepared task keeps it: once per task and batch); it
    must define every task function. None for a kit, which has frozen cases instead
    (spec.py lets only a kit lack it)."""
    if not os.path.isfile(task.reference_path):
        return None
    name = f"grader_reference_{task.id.replace('-', '_')}_{task.digest}"
    spec = importlib.util.spec_from_file_location(name, task.reference_path)
    assert spec is not None and spec.loader is not None  # (a .py path always has both)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise SpecError(
            [f"{task.reference_path}: the reference solution does not import: {type(exc).__name__}: {exc}"]
        ) from None
    needed = dict.fromkeys(list(task.functions) + [f for c in task.checks for f in c.reference_functions])
    missing = [f for f in needed if not callable(getattr(module, f, None))]
    if missing:
        raise SpecError(
            [
                f"{task.reference_path}: the reference does not define "
                f"{', '.join(missing)}, which task.yaml uses."
            ]
        )
    sys.modules[name] = module
    return module


def call_reference(module: ModuleType, function: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """Run the reference on copies, so it can never change the inputs sent to the student."""
    return getattr(module, function)(*copy.deepcopy(args), **copy.deepcopy(kwargs))
