"""leaves-sum checks: the script computed a batch and a sum of it and rows of the
reference's array (see script_work.py for what the leaves kinds share and which arrays
count)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from grader.grading.checks import fields
from grader.grading.checks.script_work import (
    OPERANDS,
    REFERENCE_FIELD,
    LeavesKind,
    LeavesOptions,
    inventory,
    leaves_options,
    reference_array,
    typed,
    typed_result,
)
from grader.grading.checks.typed_in import non_trivial
from grader.grading.compare import parse_select
from grader.records.result import CheckResult, judged
from grader.records.statuses import TYPED_IN
from grader.task.check_kind import Reading
from grader.task.spec import CheckSpec

if TYPE_CHECKING:
    from grader.grading.context import Context


@dataclass(frozen=True)
class LeavesSumOptions(LeavesOptions):
    select: str = ""  # the rows of the reference's array that were added
    shape: tuple[int, ...] = ()  # the shape of the sum


def read(r: Reading) -> LeavesSumOptions:
    options = leaves_options(r)
    fields.check_select(r)
    return LeavesSumOptions(**options, select=r.raw["select"], shape=tuple(r.raw["shape"]))


def run(ctx: Context, check: CheckSpec[LeavesSumOptions]) -> CheckResult:
    table = reference_array(ctx, check)
    rows = table[parse_select(check.options.select)]
    shape = check.options.shape
    arrays = {n: _Array(_numbers(entry[0]), *_provenance(entry)) for n, entry in ctx.script.arrays.items()}
    listed = {n: (a.values,) for n, a in arrays.items()}
    sums = {n: a.values for n, a in arrays.items() if a.values.shape == shape and a.role not in OPERANDS}
    if not sums:
        return judged(
            check, False, f"your script never computed a sum of shape {shape}. {inventory(listed)}."
        )
    # The batch is an array of the sum's shape of its own (the statement's rule).
    pairs = [
        (s, b, sums[s] - arrays[b].values)
        for s in sums
        for b in arrays
        if b != s and arrays[b].values.shape == shape
    ]
    tolerance = check.options.tolerance
    rtol, atol = tolerance.rtol, tolerance.atol
    zero_batches, typed_pairs = [], []
    for s, b, added in pairs:
        if np.allclose(added, rows, rtol=rtol, atol=atol):
            if not _is_zero(arrays[b].values, atol):
                passed = f"{s} = {b} + the rows asked for"
            elif _added(sums[s], arrays[b].values, arrays, rtol, atol):
                passed = f"{s} = {b} (zeros) + the rows asked for"
            else:
                zero_batches.append((s, b))
                continue
            typed_in = _typed_pair(ctx, check, s, b, sums[s], arrays[b].values, added, rows)
            if typed_in is None:
                return judged(check, True, passed)
            typed_pairs.append(typed_in)
    if typed_pairs:
        return typed_pairs[0]
    if zero_batches:
        s, b = zero_batches[0]
        return judged(
            check,
            False,
            f"{s} holds the rows asked for and {b} is all zeros, but your "
            f"script never added them: a sum of shape {shape} must be made "
            "by adding the rows to the batch (`batch + rows`, `batch += "
            "rows`, `np.add(batch, rows)`).",
        )
    if not pairs:
        return judged(
            check,
            False,
            f"{next(iter(sums))} has the sum's shape, but your script "
            f"computed no batch of shape {shape} it could have been made "
            f"from: make the batch an array of its own. {inventory(listed)}.",
        )
    # Name the nearest miss: other rows of the same table, else any sum that adds something.
    count = rows.shape[0] if rows.ndim >= 1 else 1
    for s, b, added in pairs:
        for start in range(table.shape[0] - count + 1):
            window = table[start : start + count]
            if np.shape(added)[-window.ndim :] == window.shape and np.allclose(
                added, window, rtol=rtol, atol=atol
            ):
                return judged(
                    check,
                    False,
                    f"{s} = {b} + rows {start} to {start + count - 1} "
                    f"of the {table.shape} table; the exercise asks for "
                    f"rows {check.options.select}.",
                )
    s, b, added = next(((s, b, a) for s, b, a in pairs if not np.allclose(a, 0)), pairs[0])
    what = "adds nothing" if np.allclose(added, 0) else "adds values that are not those rows"
    return judged(
        check,
        False,
        f"{s} - {b} {what}: a sum of shape {shape} must be a batch "
        f"plus rows {check.options.select} of the {table.shape} table.",
    )


def _typed_pair(
    ctx: Context,
    check: CheckSpec[LeavesSumOptions],
    s: str,
    b: str,
    total: np.ndarray,
    batch: np.ndarray,
    added: np.ndarray,
    rows: np.ndarray,
) -> CheckResult | None:
    """Why a right sum does not count, if it does not: the rows it adds or the sum itself
    typed in, or the rows hidden in a typed batch (a batch may be typed in, as the
    tutorial's is, but not one precise enough to hold the rows: sum - batch = rows)."""
    compute = "compute the table and add its rows to the batch"
    found = typed(ctx, check, added)
    if found is not None:
        return typed_result(ctx, check, f"{s} - {b}", "the rows asked for", found, compute)
    found = typed(ctx, check, total)
    if found is not None:
        return typed_result(ctx, check, s, "the sum", found, compute)
    tolerance = check.options.tolerance
    telling = non_trivial(rows, tolerance).size
    if telling and non_trivial(total, tolerance).size < (telling + 1) // 2:
        return judged(
            check,
            False,
            f"{s} - {b} is the rows asked for, but {s} holds only round "
            f"numbers, which can be typed in, so the rows were in {b}: "
            f"{compute}.",
            reason=TYPED_IN,
        )
    found = typed(ctx, check, batch, precise=4)
    if found is not None:
        where = (
            ""
            if found.line is None
            else f" (typed in at {ctx.source.where(found.line)}, to four or more digits)"
        )
        return judged(
            check,
            False,
            f"{s} - {b} is the rows asked for, but {b} is a batch typed "
            f"in precisely enough to hold them{where}, so they need not "
            "have been computed. Type a plainer batch (ones, or numbers "
            f"of a digit or two) or make it with numpy, and {compute}.",
            reason=TYPED_IN,
        )
    return None


@dataclass(frozen=True)
class _Array:
    values: np.ndarray
    role: str  # variable, or as sandbox/inside/computed.py says
    record: int  # the recording it came from (-1: a variable, a local)
    addition: bool  # that recording is an addition's


def _provenance(entry: tuple) -> tuple[str, int, bool]:
    role = entry[2] if len(entry) > 2 else "variable"
    record = entry[3] if len(entry) > 3 else -1
    addition = entry[4] if len(entry) > 4 else False
    return role, record, addition


def _is_zero(batch: np.ndarray, atol: float) -> bool:
    return bool(np.allclose(batch, 0, rtol=0, atol=atol))


def _added(total: np.ndarray, batch: np.ndarray, arrays: dict[str, _Array], rtol: float, atol: float) -> bool:
    """A recorded addition had the (zero) batch as an operand and the sum as its result:
    with a zero batch, sum minus batch equal to the rows proves nothing by itself."""
    records: dict[int, list[_Array]] = {}
    for a in arrays.values():
        if a.addition and a.record >= 0:
            records.setdefault(a.record, []).append(a)
    for members in records.values():
        results = [a.values for a in members if a.role in ("result", "whole")]
        operands = [a.values for a in members if a.role in OPERANDS]
        if any(
            r.shape == total.shape and np.allclose(r, total, rtol=rtol, atol=atol) for r in results
        ) and any(o.shape == batch.shape and np.allclose(o, batch, rtol=rtol, atol=atol) for o in operands):
            return True
    return False


def _numbers(arr: np.ndarray) -> np.ndarray:
    """Booleans as 0 and 1 (numpy refuses to subtract them), other numbers as they are."""
    return arr.astype(np.int8) if arr.dtype.kind == "b" else arr


LEAVES_SUM_FIELDS = {
    **REFERENCE_FIELD,
    "args": fields.ARGS,
    "select": fields.SELECT,
    "shape": {
        "type": "array",
        "items": {"type": "integer", "minimum": 0},
        "description": "Shape of the sum the script must compute.",
    },
    "tolerance": fields.TOLERANCE,
}


class LeavesSum(LeavesKind):
    name = "leaves-sum"
    fields = LEAVES_SUM_FIELDS
    required = ("reference", "select", "shape")

    def read(self, reading: Reading) -> LeavesSumOptions:
        return read(reading)

    def run(self, ctx: Context, check: CheckSpec[LeavesSumOptions]) -> CheckResult:
        return run(ctx, check)


KIND = LeavesSum()
