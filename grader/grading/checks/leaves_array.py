"""leaves-array checks: an array the script computed is the reference's array (see
script_work.py for what the leaves kinds share and which arrays count)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from grader.grading.checks import fields
from grader.grading.checks.script_work import (
    REFERENCE_FIELD,
    LeavesKind,
    LeavesOptions,
    close,
    differences,
    inventory,
    leaves_options,
    reference_array,
    typed,
    typed_result,
)
from grader.grading.policy import near_miss
from grader.records.result import CheckResult, judged
from grader.task.check_kind import Reading
from grader.task.spec import CheckSpec

if TYPE_CHECKING:
    from grader.grading.context import Context


def read(r: Reading) -> LeavesOptions:
    return LeavesOptions(**leaves_options(r))


def run(ctx: Context, check: CheckSpec[LeavesOptions]) -> CheckResult:
    want = reference_array(ctx, check)
    arrays = ctx.script.arrays
    typed_in = None
    for name, (arr, *_) in arrays.items():
        if close(arr, want, check):
            found = typed(ctx, check, arr)
            if found is None:
                return judged(check, True, f"found in {name}")
            typed_in = typed_in or (name, found)
    if typed_in:
        return typed_result(ctx, check, typed_in[0], "the table", typed_in[1], "compute the table")
    for name, (arr, *_) in arrays.items():
        if want.ndim == 2 and close(arr, want.T, check):
            if not check.hidden and typed(ctx, check, arr) is None:
                ctx.near.add(check.name)  # the table, computed, the wrong way round (policy.py)
            return judged(
                check,
                False,
                f"{name} holds the table transposed, shape "
                f"{arr.shape}; it must have shape {want.shape} "
                "(a row per position, a column per axis).",
            )
    same_shape = [name for name, (arr, *_) in arrays.items() if arr.shape == want.shape]
    if same_shape:
        # The script's result is the last variable it assigned (the ones before, its steps);
        # arrays it only computed on the way are named when no variable has the shape.
        kept = [n for n in same_shape if arrays[n][2] == "variable"] or same_shape
        name, steps = kept[-1], kept[:-1][-3:]
        others = ", ".join(steps)
        verb = "has" if len(steps) == 1 else "have"
        others_note = f" ({others} {verb} that shape too)" if others else ""
        if not check.hidden and any(
            near_miss(want, arrays[n][0], (), check.options.tolerance)
            and typed(ctx, check, arrays[n][0]) is None
            for n in same_shape
        ):
            ctx.near.add(check.name)  # a computed table with wrong values is work (policy.py)
        return judged(
            check,
            False,
            f"{name} has the table's shape {want.shape} but "
            f"not its values{others_note}: "
            f"{differences(want, arrays[name][0], check)}.",
        )
    return judged(
        check,
        False,
        f"your script never computed the {want.shape} table: build "
        "it (printing a shape you typed in does not count). "
        f"{inventory(arrays)}.",
    )


LEAVES_ARRAY_FIELDS = {**REFERENCE_FIELD, "args": fields.ARGS, "tolerance": fields.TOLERANCE}


class LeavesArray(LeavesKind):
    name = "leaves-array"
    fields = LEAVES_ARRAY_FIELDS
    required = ("reference",)

    def read(self, reading: Reading) -> LeavesOptions:
        return read(reading)

    def run(self, ctx: Context, check: CheckSpec[LeavesOptions]) -> CheckResult:
        return run(ctx, check)


KIND = LeavesArray()
