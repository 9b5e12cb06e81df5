"""prints checks: the answer a script prints, read by a lenient, documented rule.

The answer is the last non-empty line the script prints; lines before it (debugging) are
ignored. Its numbers are read in order after dropping framework annotations such as
``shape=(2,)`` and ``dtype=int32``, so these all read as the shape (5, 8):
``(5, 8)``, ``[5, 8]``, ``5 8``, ``TensorShape([5, 8])``, ``torch.Size([5, 8])``,
``tf.Tensor([5 8], shape=(2,), dtype=int32)``. A length reads from ``4``, ``(4,)`` or
``torch.Size([4])``. The printed text is treated as data: parsed, never evaluated.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..result import CheckResult, judged
from ..spec import CheckSpec
from .kind import SCRIPT, Kind, Options, Reading

if TYPE_CHECKING:
    from ..grading import Context

ANNOTATIONS = re.compile(r",?\s*(?:shape=\([^)]*\)|dtype=[\w.]+|device=[\w:'\"]+)")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
NUMBERS_SHOWN = 8
LINE_CAP = 500


def read_answer(stdout: str) -> tuple[str, list[float]] | None:
    """(the line, its numbers) for the last non-empty printed line, or None."""
    lines = [line.strip() for line in stdout.splitlines() if line.strip()]
    if not lines:
        return None
    line = lines[-1][:LINE_CAP]
    return line, [float(n) for n in NUMBER.findall(ANNOTATIONS.sub("", line))]


@dataclass(frozen=True)
class PrintsOptions(Options):
    answer: str = ""    # the reference function that returns the answer
    format: str = ""    # how the printed answer is read: shape | integer

    @property
    def reference_function(self) -> str | None:
        return self.answer


def read(r: Reading) -> PrintsOptions:
    return PrintsOptions(answer=r.raw["answer"], format=r.raw["format"])


def reference_value(reference: Any, check: CheckSpec[PrintsOptions]) -> Any:
    return getattr(reference, check.options.answer)()


def expected_answer(ctx: Context, check: CheckSpec[PrintsOptions]) -> Any:
    value = ctx.reference_value(check)
    return tuple(int(d) for d in value) if check.options.format == "shape" else int(value)


def _shown(numbers: list[float]) -> str:
    text = ", ".join(str(int(n)) if n.is_integer() else f"{n:g}" for n in numbers[:NUMBERS_SHOWN])
    return text + (", ..." if len(numbers) > NUMBERS_SHOWN else "")


def run(ctx: Context, check: CheckSpec[PrintsOptions]) -> CheckResult:
    want = expected_answer(ctx, check)
    found = read_answer(ctx.script.stdout)
    shape = check.options.format == "shape"
    what = "a shape" if shape else "a length"

    if found is None:
        return judged(check, False, f"your script printed nothing; print {what} as its last line.")
    line, numbers = found
    wanted = list(want) if shape else [want]
    if numbers == wanted:
        return judged(check, True)
    if not numbers:
        return judged(check, False, f"the last line you printed, '{line}', holds no number; "
                             f"print {what} as the last line.")
    if shape and sorted(numbers) == sorted(wanted):
        return judged(check, False, f"you printed ({_shown(numbers)}): the right sizes in the wrong "
                             "order. Rows are positions, columns are axes.")
    expected_text = f"({', '.join(map(str, wanted))})" if shape else str(want)
    return judged(check, False, f"the last line you printed reads as ({_shown(numbers)}); the answer "
                         f"is {expected_text}.")


KIND = Kind(
    "prints", SCRIPT, run, read, required=("answer", "format"), reference_value=reference_value,
    fields={"answer": {"$ref": "#/$defs/identifier",
                       "description": "Reference function that returns the answer the script must print."},
            "format": {"enum": ["shape", "integer"],
                       "description": "How the printed answer is read (see README: script tasks)."}})
