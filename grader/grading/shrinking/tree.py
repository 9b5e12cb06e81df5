"""Shrink paths: what a class's shrinks of one check tried, as a tree the next shrink walks.

A shrink (checks/calls.py) is derandomized: which input Hypothesis tries next depends only
on which of the inputs before it failed. So every shrink of one check starts with the same
input, and after it, the input tried next depends on whether that one failed: the shrinks
of a class form one tree, an input at each node and a branch for each outcome. A shrink
walks the tree first, calling the submission on each node's input in turn and following
its outcome. Where the branch ends the shrink ended, and the smallest failure met on the
way, with the submission's own answer (its message, its output), is what it finds. Where
the tree has no branch for an outcome yet, Hypothesis takes over, given the outcomes met
so far without calling again, and what it tries next is added to the tree.

So a submission is sent exactly the inputs its own shrink sends, in the same order, each
once, and is shown the same input; only Hypothesis's own work (most of a shrink's time) is
saved for the students whose shrinks have been walked before. What a submission could tell
from it is timing only (a known branch answers sooner), as the CPU it shares with the
classmate graded beside it already shows. Trees are kept per check by the prepared task,
within a byte budget.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from grader.task.case_size import nbytes
from grader.task.strategies import Drawn

BOOK_BYTES = 32 << 20  # all trees of a prepared task, inputs and expected outputs together


@dataclass(frozen=True)
class Step:
    """One input a shrink tried, and whether it failed there."""

    drawn: Drawn
    expected: Any  # the reference's output on it (None: the judge needs none)
    answered: bool  # False: the reference defines no answer here; the input was passed over
    failed: bool


@dataclass
class Node:
    drawn: Drawn
    expected: Any
    answered: bool
    # outcome (failed?) -> the next input tried, or None where the shrink ended; a missing
    # key: no shrink walked that way yet
    after: dict[bool, Node | None] = field(default_factory=dict)


@dataclass
class ShrinkTrees:
    """The shrink tree of each check of a prepared task (check name -> its root)."""

    roots: dict[str, Node] = field(default_factory=dict)
    held: int = 0  # bytes

    def root(self, check: str) -> Node | None:
        return self.roots.get(check)

    def add(self, check: str, steps: list[Step]) -> None:
        """Add the path of a shrink that ran to its end (every input it tried, in order)."""
        if not steps:
            return
        first = steps[0]
        root = self.roots.get(check)
        if root is None:
            root = self._node(first)
            if root is None:
                return
            self.roots[check] = root
        elif not same_args(root.drawn.args, first.drawn.args):
            return  # (not the same derandomized sequence: nothing to share)
        node = root
        for step, after in zip(steps, [*steps[1:], None]):
            known = node.after.get(step.failed, ...)
            if after is None:
                if known is ...:
                    node.after[step.failed] = None
                return
            if isinstance(known, Node):
                if not same_args(known.drawn.args, after.drawn.args):
                    return
                node = known
                continue
            if known is None:
                return  # (the tree says it ended here: a shrink that did not is not added)
            child = self._node(after)
            if child is None:
                return
            node.after[step.failed] = child
            node = child

    def _node(self, step: Step) -> Node | None:
        size = nbytes(step.drawn.args) + nbytes(step.expected)
        if self.held + size > BOOK_BYTES:
            return None
        self.held += size
        return Node(step.drawn, step.expected, step.answered)


def same_args(a: dict[str, Any], b: dict[str, Any]) -> bool:
    if a.keys() != b.keys():
        return False
    for name, x in a.items():
        y = b[name]
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if not (
                isinstance(x, np.ndarray)
                and isinstance(y, np.ndarray)
                and x.dtype == y.dtype
                and x.shape == y.shape
                and np.array_equal(x, y)
            ):
                return False
        elif type(x) is not type(y) or x != y:
            return False
    return True
