"""leaves-array and leaves-sum checks: the script must have done the work, not just printed.

After the script runs, the worker sends back the numeric arrays it left in its globals
(framework tensors converted to numpy there). Here, on the trusted side, one of them must
be the reference's array (leaves-array), or a sum equal to a batch the script also kept
plus the selected rows of the reference's array (leaves-sum). Near misses are named:
a transposed table, other rows than asked for, nothing added.
"""
from __future__ import annotations

import numpy as np

from ..compare import check_values, parse_select
from ..result import CheckResult, judged
from ..spec import CheckSpec

SHOWN = 8


def _close(a: np.ndarray, b: np.ndarray, check: CheckSpec) -> bool:
    return a.shape == b.shape and check_values(b, a, check.tolerance).ok


def _inventory(arrays: dict) -> str:
    if not arrays:
        return "Your script left no arrays in variables"
    items = [f"{name} {arr.shape}" for name, (arr, _) in list(arrays.items())[:SHOWN]]
    more = f" and {len(arrays) - SHOWN} more" if len(arrays) > SHOWN else ""
    return f"Arrays left in variables: {', '.join(items)}{more}"


def reference_array(ctx, check: CheckSpec) -> np.ndarray:
    return np.asarray(ctx.reference_value(check), dtype=float)


def leaves_array(ctx, check: CheckSpec) -> CheckResult:
    want = reference_array(ctx, check)
    arrays = ctx.script.arrays
    for name, (arr, _) in arrays.items():
        if _close(arr, want, check):
            return judged(check, True, f"found in variable '{name}'")
    for name, (arr, _) in arrays.items():
        if want.ndim == 2 and _close(arr, want.T, check):
            return judged(check, False, f"'{name}' holds the table transposed, shape "
                                         f"{arr.shape}; it must have shape {want.shape} "
                                         "(a row per position, a column per axis).")
    for name, (arr, _) in arrays.items():
        if arr.shape == want.shape:
            verdict = check_values(want, arr, check.tolerance)
            return judged(check, False, f"'{name}' has the table's shape {want.shape} but "
                                         f"not its values: {verdict.message}")
    return judged(check, False, f"no variable holds the {want.shape} table: build the "
                                 "table and keep it in a variable (printing a shape you "
                                 f"typed in does not count). {_inventory(arrays)}.")


def leaves_sum(ctx, check: CheckSpec) -> CheckResult:
    table = reference_array(ctx, check)
    rows = table[parse_select(check.select)]
    arrays = ctx.script.arrays
    shape = tuple(check.shape)
    arrays = {n: (_numbers(a), t) for n, (a, t) in arrays.items()}
    sums = {n: a for n, (a, _) in arrays.items() if a.shape == shape}
    if not sums:
        return judged(check, False, f"no variable holds a sum of shape {shape}. "
                                     f"{_inventory(arrays)}.")
    pairs = [(s, b, sums[s] - arr) for s in sums for b, (arr, _) in arrays.items()
             if b != s and arr.ndim >= 1 and _broadcasts(arr.shape, shape)]
    close = dict(rtol=check.tolerance.rtol, atol=check.tolerance.atol)
    for s, b, added in pairs:
        if np.allclose(added, rows, **close):
            return judged(check, True, f"'{s}' = '{b}' + the rows asked for")
    if not pairs:
        return judged(check, False, f"'{next(iter(sums))}' has the sum's shape, but no other "
                                     "variable holds the batch it was made from: keep the batch "
                                     f"in its own variable. {_inventory(arrays)}.")
    # Name the nearest miss: other rows of the same table, else any sum that adds something.
    count = rows.shape[0] if rows.ndim >= 1 else 1
    for s, b, added in pairs:
        for start in range(table.shape[0] - count + 1):
            window = table[start:start + count]
            if np.shape(added)[-window.ndim:] == window.shape and np.allclose(added, window, **close):
                return judged(check, False, f"'{s}' = '{b}' + rows {start} to {start + count - 1} "
                                             f"of the {table.shape} table; the exercise asks for "
                                             f"rows {check.select}.")
    s, b, added = next(((s, b, a) for s, b, a in pairs if not np.allclose(a, 0)), pairs[0])
    what = "adds nothing" if np.allclose(added, 0) else "adds values that are not those rows"
    return judged(check, False, f"'{s}' - '{b}' {what}: a sum of shape {shape} must be a batch "
                                 f"plus rows {check.select} of the {table.shape} table.")


def _numbers(arr: np.ndarray) -> np.ndarray:
    """Booleans as 0 and 1 (numpy refuses to subtract them), other numbers as they are."""
    return arr.astype(np.int8) if arr.dtype.kind == "b" else arr


def _broadcasts(small: tuple, big: tuple) -> bool:
    try:
        return np.broadcast_shapes(small, big) == big
    except ValueError:
        return False
