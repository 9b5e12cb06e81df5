"""Where the grader keeps what only saves it time (generated cases, reference times, specs
found valid, freezes found intact): ``$GRADER_CACHE_DIR``, default ``~/.cache/grader``.
Nothing kept here decides a grade: a missing or unwritable cache only costs time."""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any


def cache_root() -> str:
    return os.environ.get("GRADER_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "grader"
    )


def cache_folder(name: str) -> str:
    return os.path.join(cache_root(), name)


def read_json(folder: str, key: str) -> Any:
    """The JSON kept under ``key``; None when there is none or it cannot be read."""
    try:
        with open(os.path.join(cache_folder(folder), key + ".json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def write_json(folder: str, key: str, data: Any) -> None:
    """Keep ``data`` under ``key``, whole or not at all (written aside, then renamed)."""
    try:
        where = cache_folder(folder)
        os.makedirs(where, mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=where, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(data, f)
        os.replace(tmp, os.path.join(where, key + ".json"))
    except OSError:
        pass  # a cache that cannot be written only costs time
