"""What leaves-array and leaves-sum checks share: the script must have done the work, not
just printed.

After the script runs, the worker sends back the arrays it computed (framework tensors
converted to numpy there): those left in its globals, then those it computed elsewhere,
in any style (sandbox/inside/computed.py): the values of its calls (``table(4, 6)``, a
helper's result), the operands and results of its arithmetic (``batch + table(4, 6)[:3]``
with no variable at all), and the locals of its functions when they end (a ``main()``).
Each is named by where it was: variable 'x', `table(4, 6)` (line 7). On the
trusted side one of them must be the reference's array (leaves_array.py), or a sum of
another of them (the batch) and rows of that array (leaves_sum.py). Near misses are named:
a transposed table, other rows than asked for, nothing added. Printing a shape typed in
computes nothing, so it earns none of these, and neither does an array whose values were
typed into the file (typed_in.py: decided from the source text and the values, never from
what the worker says of where an array came from).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from grader.grading.checks import fields
from grader.grading.checks.kind import SCRIPT, Kind
from grader.grading.checks.typed_in import Typed, typed_in
from grader.grading.compare import check_values
from grader.records.result import CheckResult, judged
from grader.records.statuses import TYPED_IN
from grader.task.check_kind import CheckOptions, Reading
from grader.task.spec import CheckSpec
from grader.task.tolerance import Tolerance

if TYPE_CHECKING:
    from grader.grading.context import Context

SHOWN = 8
# Roles of arrays that were only an operand of the script's arithmetic (see
# sandbox/inside/computed.py): a batch may be one, a sum must have been made.
OPERANDS = frozenset({"left", "right", "before", "whole-before"})


@dataclass(frozen=True)
class LeavesOptions(CheckOptions):
    reference: str = ""  # the reference function that builds the array
    args: dict = field(default_factory=dict)  # its arguments (literal values)
    tolerance: Tolerance = Tolerance()

    @property
    def reference_function(self) -> str | None:
        return self.reference


REFERENCE_FIELD = {
    "reference": {
        "$ref": "#/$defs/identifier",
        "description": "Reference function that builds the array the script must compute.",
    }
}


def leaves_options(r: Reading) -> dict[str, Any]:
    fields.check_arguments(r)
    return dict(reference=r.raw["reference"], args=r.raw.get("args", {}), tolerance=r.tolerance())


class LeavesKind(Kind):
    """leaves-array and leaves-sum: an array the script must have computed, compared with
    the reference's, which is the answer itself (kept from kits: final grading)."""

    families = SCRIPT

    def compares_with_reference_value(self) -> bool:
        return True

    def reference_value(self, reference: Any, check: CheckSpec[LeavesOptions]) -> Any:
        return getattr(reference, check.options.reference)(**check.options.args)

    def answer_is_private(self) -> bool:
        return True

    def answer_carries_arrays(self) -> bool:
        return True


def close(a: np.ndarray, b: np.ndarray, check: CheckSpec[LeavesOptions]) -> bool:
    return a.shape == b.shape and check_values(b, a, check.options.tolerance).ok


def differences(want: np.ndarray, got: np.ndarray, check: CheckSpec[LeavesOptions]) -> str:
    """Where the script's array differs from the reference's and what the script's value is
    there, never the expected value (nor the error, which gives it away)."""
    tolerance = check.options.tolerance
    with np.errstate(invalid="ignore", over="ignore"):
        values = np.asarray(got, dtype=float)
        off = ~np.isclose(values, want, rtol=tolerance.rtol, atol=tolerance.atol, equal_nan=True)
    count = int(np.count_nonzero(off))
    if count == 0:
        return "its values are off"
    first = tuple(int(i) for i in np.argwhere(off)[0])
    return (
        f"{count} of {off.size} values are off (tolerance rtol={tolerance.rtol:g}, "
        f"atol={tolerance.atol:g}); the first at [{', '.join(map(str, first))}], where your "
        f"script has {values[first]:.8g}"
    )


def inventory(arrays: dict) -> str:
    if not arrays:
        return "Your script computed no arrays"
    items = [f"{name} {arr.shape}" for name, (arr, *_) in list(arrays.items())[:SHOWN]]
    more = f" and {len(arrays) - SHOWN} more" if len(arrays) > SHOWN else ""
    return f"Arrays your script computed: {', '.join(items)}{more}"


def typed(
    ctx: Context, check: CheckSpec[LeavesOptions], values: npt.ArrayLike, precise: int = 3
) -> Typed | None:
    """The values typed in, as typed_in.py rules, with this check's tolerance."""
    return typed_in(values, ctx.source_numbers(), check.options.tolerance, precise)


def typed_result(
    ctx: Context, check: CheckSpec, name: str, what: str, found: Typed, instead: str
) -> CheckResult:
    """The failure of an array that is right but typed in: where, and what to do (never
    its values)."""
    if found.line is None:
        message = (
            f"{name} holds {what}, but your file holds more numbers (written or "
            "encoded) than the grader reads, so it cannot tell a computed array from "
            f"one typed in: {instead}, with no such mass of numbers in the file."
        )
        return judged(check, False, message, reason=TYPED_IN)
    if found.by_count:
        message = (
            f"{name} holds {what}, but your file writes {found.found} precise numbers, "
            f"at least half as many as its {found.of} telling values (most at "
            f"{ctx.source.where(found.line or 1)}): computing it needs a handful, so its "
            f"values were typed in by some arithmetic. {instead[:1].upper()}{instead[1:]} "
            "from the statement's rule."
        )
        cell, line = ctx.source.source_map.locate(found.line or 1)
        return dataclasses.replace(judged(check, False, message, reason=TYPED_IN), line=line, cell=cell)
    message = (
        f"{name} holds {what}, but its values are typed in: {found.found} of its "
        f"{found.of} telling values are numbers written in your file, as they are or "
        f"encoded, at {ctx.source.where(found.line)}. {instead[:1].upper()}{instead[1:]}; "
        "typing its values in does not count."
    )
    cell, line = ctx.source.source_map.locate(found.line)
    return dataclasses.replace(judged(check, False, message, reason=TYPED_IN), line=line, cell=cell)


def reference_array(ctx: Context, check: CheckSpec[LeavesOptions]) -> np.ndarray:
    return np.asarray(ctx.reference_value(check), dtype=float)


def wanted_shapes(ctx: Context, checks: Sequence[CheckSpec]) -> list[list[int]]:
    """The shapes of the arrays the leaves checks look for (a table and its transpose, a
    sum): the worker sends arrays of these shapes first, so big arrays of a script never
    crowd them out. Only shapes leave the trusted side, never values."""
    shapes: list[list[int]] = []
    for check in checks:
        if check.kind.name == "leaves-array":
            shape = list(reference_array(ctx, check).shape)
            shapes += [shape, shape[::-1]]
        elif check.kind.name == "leaves-sum":
            shapes.append(list(check.options.shape))
    return shapes
