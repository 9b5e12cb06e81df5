"""A task's edges: inputs that only the checks about them judge.

The statement's stated bounds (``1 <= d_model``) are inputs like no other: code that is
right everywhere else can stumble there, and a derandomized draw meets them first, in every
check of the function. Without a rule, one fault at d_model = 1 (a crash, a wrong shape)
failed eleven checks of a file that was right on every other input. So a task names its
edges in ``task.yaml`` and the checks about each one: a check judges an edge when it lists
a case there (an example's cases, a property's edge_cases) or names it under its own
``edges:``; every other check draws its cases clear of it (and Hypothesis shrinks clear of
it). One fault at an edge then costs the checks the task writer put there, and the points
they carry are how much the task says that edge weighs.

An edge is a few conditions on arguments, any of which puts an argument set on it: a
parameter equal to a value (``d_model: 1``), or an array argument of a given length along
an axis (``x: {axis: -1, size: 1}``, for a function that takes the table's width as the
last axis of its input).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Condition:
    parameter: str
    value: Any = None  # the parameter equals it (when axis is None)
    axis: int | None = None  # else: the array argument has ``size`` along this axis
    size: int = 0

    def holds(self, args: dict[str, Any]) -> bool:
        if self.parameter not in args:
            return False
        given = args[self.parameter]
        if self.axis is None:
            return not isinstance(given, np.ndarray) and type(given) is not bool and given == self.value
        shape = np.shape(given)
        return -len(shape) <= self.axis < len(shape) and shape[self.axis] == self.size


@dataclass(frozen=True)
class Edge:
    name: str
    description: str
    conditions: tuple[Condition, ...]
    line: int = 0

    def holds(self, args: dict[str, Any]) -> bool:
        return any(c.holds(args) for c in self.conditions)


def read(
    raw: dict[str, Any],
    at_line: Callable[[tuple[str, ...]], int],
    problem: Callable[[tuple[str, ...], str], None],
    parameters: set[str],
) -> tuple[Edge, ...]:
    """The task's ``edges:`` mapping (valid against the schema), with what a schema cannot
    say: every condition names a parameter of some task function."""
    found = []
    for name, entry in raw.items():
        conditions = []
        for parameter, spec in entry["where"].items():
            if parameter not in parameters:
                problem(
                    ("edges", name, "where", parameter),
                    f"'{parameter}' is no parameter of the task's functions "
                    f"({', '.join(sorted(parameters))}). Name the parameter the edge is on.",
                )
            if isinstance(spec, dict):
                conditions.append(Condition(parameter, axis=spec["axis"], size=spec["size"]))
            else:
                conditions.append(Condition(parameter, value=spec))
        found.append(Edge(name, entry.get("description", ""), tuple(conditions), at_line(("edges", name))))
    return tuple(found)


def judged_by(edge: Edge, literal_cases: Iterable[dict[str, Any]], named: tuple[str, ...]) -> bool:
    """Whether a check judges ``edge``: it lists a case on it, or names it."""
    return edge.name in named or any(edge.holds(case) for case in literal_cases)


def off_edges(args: dict[str, Any], avoid: tuple[Edge, ...]) -> bool:
    """Whether a drawn argument set keeps clear of every edge a check must avoid."""
    return not any(edge.holds(args) for edge in avoid)
