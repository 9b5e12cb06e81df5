"""How many bytes of arrays a value holds (nested lists, tuples and dicts counted): what
the answer cap and the memos of outputs and shrink traces weigh."""

from __future__ import annotations

import numpy as np


def nbytes(value: object, depth: int = 0) -> int:
    if depth > 64:
        return 0
    if isinstance(value, (np.ndarray, np.generic)):
        return int(np.asarray(value).nbytes)
    if isinstance(value, (list, tuple)):
        return sum(nbytes(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return sum(nbytes(v, depth + 1) for v in value.values())
    return 64 if isinstance(value, (int, float, complex)) else 0
