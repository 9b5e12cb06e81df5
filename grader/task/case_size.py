"""How big a value is: an argument set's size, so that the failing input shown is the
smallest one, and the bytes of arrays a value holds (``nbytes``: what the answer cap and
the memos weigh).

The measure, compared in this order: the number of elements of its arrays (a list counts
its items, nested ones included), then the sum of the magnitudes of its integers. Floats,
strings and booleans do not count. Equal sizes keep the order the cases are listed in.
So ``f(x=np.full((2, 3), 0.0))`` (6 elements) is smaller than ``f(x=np.full((1, 7), 0.0))``
(7), and ``g(max_len=64, d_model=1024)`` (no array, 1088) is smaller than
``g(max_len=8192, d_model=2)`` (8194).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def case_size(args: dict) -> tuple[int, int]:
    """(array elements, sum of |integers|) of one argument set."""
    elements = integers = 0
    for value in args.values():
        e, i = _size(value)
        elements, integers = elements + e, integers + i
    return elements, integers


def _size(value: Any) -> tuple[int, int]:
    if isinstance(value, np.ndarray):
        return int(value.size), 0
    if isinstance(value, (list, tuple)):
        return sum(_items(value)), 0
    if isinstance(value, dict):
        return case_size(value)
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return 0, abs(int(value))
    return 0, 0


def _items(value: Any) -> list[int]:
    if isinstance(value, (list, tuple)):
        return [n for item in value for n in _items(item)]
    return [int(value.size) if isinstance(value, np.ndarray) else 1]


def smallest_first(cases: list[dict]) -> list[int]:
    """The indices of ``cases``, smallest first (a stable order)."""
    return sorted(range(len(cases)), key=lambda i: case_size(cases[i]))


def nbytes(value: object, depth: int = 0) -> int:
    """How many bytes of arrays a value holds (nested lists, tuples and dicts counted): what
    the answer cap and the memos of outputs and shrink traces weigh."""
    if depth > 64:
        return 0
    if isinstance(value, (np.ndarray, np.generic)):
        return int(np.asarray(value).nbytes)
    if isinstance(value, (list, tuple)):
        return sum(nbytes(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return sum(nbytes(v, depth + 1) for v in value.values())
    return 64 if isinstance(value, (int, float, complex)) else 0
