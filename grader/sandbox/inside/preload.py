"""The frameworks a task allows, imported by a worker (or a fork server, once for all its
workers) after it is confined and before any student code runs: the import is the
environment's cost, not the student's, and is neither timed nor recorded as evidence.

Standard library only; imported inside the sandbox. A framework that is missing or fails to
import is left alone here: the student's own import then fails in the student's run and the
grader reports the environment's gap (grading._environment_problem).
"""
from __future__ import annotations

import importlib
import sys


def preload(modules) -> list[str]:
    """Import each of ``modules``; returns those that imported."""
    done = []
    for name in modules if isinstance(modules, list) else []:
        if not isinstance(name, str):
            continue
        try:
            importlib.import_module(name)
        except Exception:
            sys.modules.pop(name, None)   # a half-imported framework is retried by the student's import
            continue
        done.append(name)
    if "torch" in done:
        _one_torch_thread()
    return done


def _one_torch_thread() -> None:
    # PyTorch's inter-op pool has no environment variable (OMP_NUM_THREADS sizes the intra-op
    # one); it may be sized only before its first use, which is now.
    try:
        torch = sys.modules["torch"]
        torch.set_num_interop_threads(1)
        torch.set_num_threads(1)
    except Exception:
        pass
