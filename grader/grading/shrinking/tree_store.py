"""Shrink paths kept on disk, in the grader's cache (disk.py), so that the pool
processes of a batch, and later runs on this machine, walk each other's shrinks
(shrinking/tree.py) instead of each running Hypothesis for the first of every mistake.

A path is every input one shrink tried, in order, with the reference's answer and whether
the submission failed there: written once (named by its content, written aside then
renamed), read as plain data (wire frames: JSON and .npy, no pickle). It is filed under
what decides the derandomized sequence: the task's files, the check, and the grader,
Hypothesis and numpy versions. Nothing in it decides a grade: a walk still calls the
submission on every input, and a path that cannot be read is passed over.
"""

from __future__ import annotations

import hashlib
import os

from grader.cases import generated_by
from grader.disk import cache_folder, entry_name, read_entry, write_entry
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
        name = entry_name("", generated_by(), self.task.digest, repr(check), digits=32)
        return os.path.join(cache_folder(FOLDER), name)

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
            steps = read_entry(os.path.join(folder, name), _decode, PATH_BYTES)
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
        self.read.setdefault(check.name, set()).add(name)  # (this process has it already)
        write_entry(os.path.join(self.folder(check), name), data)


def _decode(data: bytes) -> list[Step] | None:
    """A path as written by ``save``; None (or an error: read_entry passes it over) for a
    damaged or foreign one."""
    header, blobs = wire.unpack(data, _CAPS)
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
