"""The frameworks a task allows, imported by a worker (or a fork server, once for all its
workers) after it is confined and before any student code runs: the import is the
environment's cost, not the student's, and is neither timed nor recorded as evidence.

Standard library only; imported inside the sandbox. A framework that is missing or fails to
import is left alone here: the student's own import then fails in the student's run and the
grader reports the environment's gap (grading/load_check.py: _environment_problem).
"""

from __future__ import annotations

import importlib
import sys


def preload(modules: object, warm_up: bool = False) -> list[str]:
    """Import each of ``modules``; returns those that imported. ``warm_up``: also run one
    tiny operation of each framework, which makes its runtime (TensorFlow's eager context and
    thread pools) as a student's first line would; never in a fork server, whose forks must
    not inherit threads."""
    done = []
    if modules:
        import fonts  # (inside the sandbox: its own folder is on the path)

        fonts.quiet_fonts()  # (Keras imports matplotlib, which loads fontconfig)
    for name in modules if isinstance(modules, list) else []:
        if not isinstance(name, str):
            continue
        try:
            importlib.import_module(name)
        except Exception:
            sys.modules.pop(name, None)  # a half-imported framework is retried by the student's import
            continue
        done.append(name)
    if "torch" in done:
        _one_torch_thread()
    if warm_up:
        for name in done:
            try:
                WARM_UPS.get(name, lambda module: None)(sys.modules[name])
            except Exception:
                pass
    return done


WARM_UPS = {
    "tensorflow": lambda tf: (tf.constant([1.0]) + 1.0).numpy(),
    "torch": lambda torch: (torch.ones(1) + 1).numpy(),
}


def _one_torch_thread() -> None:
    # PyTorch's inter-op pool has no environment variable (OMP_NUM_THREADS sizes the intra-op
    # one); it may be sized only before its first use, which is now.
    try:
        torch = sys.modules["torch"]
        torch.set_num_interop_threads(1)
        torch.set_num_threads(1)
    except Exception:
        pass
