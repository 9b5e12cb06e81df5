"""leaves-sum checks: the script computed a batch and a sum of it and rows of the
reference's array (see script_work.py for what the leaves kinds share and which arrays
count)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..compare import parse_select
from ..result import CheckResult, judged
from ..spec import CheckSpec
from . import fields
from .kind import SCRIPT, Kind, Reading
from .script_work import (OPERANDS, REFERENCE_FIELD, LeavesOptions, inventory, leaves_options,
                          reference_array, reference_value)

if TYPE_CHECKING:
    from ..grading import Context


@dataclass(frozen=True)
class LeavesSumOptions(LeavesOptions):
    select: str = ""                 # the rows of the reference's array that were added
    shape: tuple[int, ...] = ()      # the shape of the sum


def read(r: Reading) -> LeavesSumOptions:
    options = leaves_options(r)
    fields.check_select(r)
    return LeavesSumOptions(**options, select=r.raw["select"], shape=tuple(r.raw["shape"]))


def run(ctx: Context, check: CheckSpec[LeavesSumOptions]) -> CheckResult:
    table = reference_array(ctx, check)
    rows = table[parse_select(check.options.select)]
    arrays = ctx.script.arrays
    shape = check.options.shape
    arrays = {n: (_numbers(a), t, role) for n, (a, t, role) in arrays.items()}
    sums = {n: a for n, (a, _, role) in arrays.items() if a.shape == shape and role not in OPERANDS}
    if not sums:
        return judged(check, False, f"your script never computed a sum of shape {shape}. "
                                     f"{inventory(arrays)}.")
    pairs = [(s, b, sums[s] - arr) for s in sums for b, (arr, *_) in arrays.items()
             if b != s and arr.ndim >= 1 and _broadcasts(arr.shape, shape)]
    rtol, atol = check.options.tolerance.rtol, check.options.tolerance.atol
    for s, b, added in pairs:
        if np.allclose(added, rows, rtol=rtol, atol=atol):
            return judged(check, True, f"{s} = {b} + the rows asked for")
    if not pairs:
        return judged(check, False, f"{next(iter(sums))} has the sum's shape, but your script "
                                     "computed no batch it could have been made from: make the "
                                     f"batch an array of its own. {inventory(arrays)}.")
    # Name the nearest miss: other rows of the same table, else any sum that adds something.
    count = rows.shape[0] if rows.ndim >= 1 else 1
    for s, b, added in pairs:
        for start in range(table.shape[0] - count + 1):
            window = table[start:start + count]
            if np.shape(added)[-window.ndim:] == window.shape and np.allclose(added, window, rtol=rtol, atol=atol):
                return judged(check, False, f"{s} = {b} + rows {start} to {start + count - 1} "
                                             f"of the {table.shape} table; the exercise asks for "
                                             f"rows {check.options.select}.")
    s, b, added = next(((s, b, a) for s, b, a in pairs if not np.allclose(a, 0)), pairs[0])
    what = "adds nothing" if np.allclose(added, 0) else "adds values that are not those rows"
    return judged(check, False, f"{s} - {b} {what}: a sum of shape {shape} must be a batch "
                                 f"plus rows {check.options.select} of the {table.shape} table.")


def _numbers(arr: np.ndarray) -> np.ndarray:
    """Booleans as 0 and 1 (numpy refuses to subtract them), other numbers as they are."""
    return arr.astype(np.int8) if arr.dtype.kind == "b" else arr


def _broadcasts(small: tuple, big: tuple) -> bool:
    try:
        return np.broadcast_shapes(small, big) == big
    except ValueError:
        return False


KIND = Kind(
    "leaves-sum", SCRIPT, run, read, required=("reference", "select", "shape"),
    fields={**REFERENCE_FIELD, "args": fields.ARGS, "select": fields.SELECT,
            "shape": {"type": "array", "items": {"type": "integer", "minimum": 0},
                      "description": "Shape of the sum the script must compute."},
            "tolerance": fields.TOLERANCE},
    reference_value=reference_value, arrays_in_answer=True)
