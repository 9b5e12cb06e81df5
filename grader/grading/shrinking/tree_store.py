"""Shrink paths kept on disk, in the grader's cache (cache_folder.py), so that the pool
processes of a batch, and later runs on this machine, walk each other's shrinks
(shrink_traces.py) instead of each running Hypothesis for the first of every mistake.

A path is every input one shrink tried, in order, with the reference's answer and whether
the submission failed there: written once (named by its content, written aside then
renamed), read as plain data (wire frames: JSON and .npy, no pickle). It is filed under
what decides the derandomized sequence: the task's files, the check, and the grader,
Hypothesis and numpy versions. Nothing in it decides a grade: a walk still calls the
submission on every input, and a path that cannot be read is passed over.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile

from grader.cases.generate import _versions
from grader.disk import cache_folder
from grader.grading.shrinking.tree import Step
from grader.sandbox import wire
from grader.task.spec import CheckSpec, Task
from grader.task.strategies import Drawn

FOLDER = "shrink-paths"
PATHS_PER_CHECK = 64  # read at most this many per check (the likely ways a class fails it)
PATH_BYTES = 4 << 20  # a longer path (large inputs) is not kept
_CAPS = wire.Caps(json_bytes=PATH_BYTES, blob_count=1 << 12, total_bytes=PATH_BYTES)


class ShrinkStore:
    """The paths on disk of one task's checks; remembers which it has read already."""

    def __init__(self, task: Task):
        self.task = task
        self.read: dict[str, set[str]] = {}

    def folder(self, check: CheckSpec) -> str:
        ident = json.dumps([_versions(), self.task.digest, repr(check)], default=str)
        return os.path.join(cache_folder(FOLDER), hashlib.sha256(ident.encode()).hexdigest()[:32])

    def new_paths(self, check: CheckSpec) -> list[list[Step]]:
        """The paths of the check written since this store last looked (by anyone)."""
        folder = self.folder(check)
        seen = self.read.setdefault(check.name, set())
        try:
            names = sorted(n for n in os.listdir(folder) if n.endswith(".frame") and n not in seen)
        except OSError:
            return []
        paths = []
        for name in names[: max(0, PATHS_PER_CHECK - len(seen))]:
            seen.add(name)
            steps = _read(os.path.join(folder, name))
            if steps:
                paths.append(steps)
        return paths

    def save(self, check: CheckSpec, steps: list[Step]) -> None:
        try:
            blobs: list[bytes] = []
            header = {
                "steps": [
                    {
                        "args": wire.encode(s.drawn.args, blobs),
                        "recipes": s.drawn.recipes,
                        "expected": wire.encode(s.expected, blobs),
                        "answered": s.answered,
                        "failed": s.failed,
                    }
                    for s in steps
                ]
            }
            data = wire.pack(header, blobs)
        except (TypeError, ValueError):
            return  # (a value the wire does not carry: this path is not kept)
        if len(data) > PATH_BYTES:
            return
        name = hashlib.sha256(data).hexdigest()[:32] + ".frame"
        folder = self.folder(check)
        self.read.setdefault(check.name, set()).add(name)  # (this process has it already)
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        except OSError:
            return  # a cache that cannot be written only costs time
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, os.path.join(folder, name))
        except OSError:
            try:
                os.remove(tmp)
            except OSError:
                pass


def _read(path: str) -> list[Step] | None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0))
        with os.fdopen(fd, "rb") as f:
            if os.fstat(f.fileno()).st_size > PATH_BYTES:
                return None
            header, blobs = wire.unpack(f.read(), _CAPS)
        steps = []
        for entry in header["steps"]:
            args = wire.decode(entry["args"], blobs, _CAPS)
            recipes = entry.get("recipes", {})
            answered, failed = entry["answered"], entry["failed"]
            if not (isinstance(args, dict) and isinstance(recipes, dict)):
                return None
            if type(answered) is not bool or type(failed) is not bool:
                return None
            expected = wire.decode(entry["expected"], blobs, _CAPS)
            steps.append(Step(Drawn(args, recipes), expected, answered, failed))
        return steps
    except (OSError, KeyError, TypeError, ValueError, wire.WireError):
        return None  # (damaged or foreign: passed over)
