"""The sandbox's inside modules as the worker imports them: by top-level name from their
folder (computed imports rewriting as ``rewriting``), so a test runs the same code."""

import importlib
import os
import sys
from types import ModuleType

import grader.sandbox.inside as inside

FOLDER = os.path.dirname(os.path.abspath(inside.__file__))


def inside_module(name: str) -> ModuleType:
    """The module ``name`` of the inside folder, imported with that folder first on
    sys.path for the import only (its other names, ``limits``, ``wire``, ..., stay out of
    the tests' way)."""
    sys.path.insert(0, FOLDER)
    try:
        module = importlib.import_module(name)
    finally:
        sys.path.remove(FOLDER)
    assert os.path.dirname(os.path.abspath(module.__file__ or "")) == FOLDER, module
    return module
