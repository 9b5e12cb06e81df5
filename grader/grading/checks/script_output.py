"""prints checks: the answer a script prints, read by a lenient, documented rule (see
printed_answer.py: the last non-empty line; words, labels and framework annotations carry
no numbers; each bracket group holding numbers, else the bare numbers, is a candidate; a
line with several different candidates is reported as such, never guessed between)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from grader.grading.checks.kind import SCRIPT, Kind
from grader.grading.checks.printed_answer import read_answer
from grader.records.result import CheckResult, judged
from grader.task.check_kind import CheckOptions, Reading
from grader.task.spec import CheckSpec

if TYPE_CHECKING:
    from grader.grading.context import Context

NUMBERS_SHOWN = 8
CANDIDATES_SHOWN = 4


@dataclass(frozen=True)
class PrintsOptions(CheckOptions):
    answer: str = ""  # the reference function that returns the answer
    format: str = ""  # how the printed answer is read: shape | integer

    @property
    def reference_function(self) -> str | None:
        return self.answer

    @property
    def shows_work(self) -> bool:
        """A printed answer can be typed in: only the arrays a script computed show work."""
        return False


def read(r: Reading) -> PrintsOptions:
    return PrintsOptions(answer=r.raw["answer"], format=r.raw["format"])


def reference_value(reference: Any, check: CheckSpec[PrintsOptions]) -> Any:
    return getattr(reference, check.options.answer)()


def expected_answer(ctx: Context, check: CheckSpec[PrintsOptions]) -> Any:
    value = ctx.reference_value(check)
    return tuple(int(d) for d in value) if check.options.format == "shape" else int(value)


def _shown(numbers: tuple[float, ...]) -> str:
    text = ", ".join(str(int(n)) if n.is_integer() else f"{n:g}" for n in numbers[:NUMBERS_SHOWN])
    return text + (", ..." if len(numbers) > NUMBERS_SHOWN else "")


def _several(candidates: tuple[tuple[float, ...], ...]) -> str:
    shown = ", ".join(f"({_shown(c)})" for c in candidates[:CANDIDATES_SHOWN])
    return shown + (", ..." if len(candidates) > CANDIDATES_SHOWN else "")


def run(ctx: Context, check: CheckSpec[PrintsOptions]) -> CheckResult:
    want = expected_answer(ctx, check)
    shape = check.options.format == "shape"
    found = read_answer(ctx.script.stdout, "shape" if shape else "integer")
    what = "a shape" if shape else "a length"

    if found is None:
        return judged(check, False, f"your script printed nothing; print {what} as its last line.")
    line, candidates = found.line, found.candidates
    if not candidates:
        return judged(
            check,
            False,
            f"the last line you printed, '{line}', holds no number; print {what} as the last line.",
        )
    if len(candidates) > 1:
        return judged(
            check,
            False,
            f"your last line, '{line}', holds several possible answers: "
            f"{_several(candidates)}; print only the answer.",
        )
    numbers = candidates[0]
    wanted = tuple(want) if shape else (want,)
    if numbers == wanted:
        return judged(check, True)
    if shape and sorted(numbers) == sorted(wanted):
        return judged(
            check,
            False,
            f"you printed ({_shown(numbers)}): the right sizes in the wrong "
            "order. Rows are positions, columns are axes.",
        )
    # (Never the expected answer: it would give the exercise away.)
    return judged(
        check,
        False,
        f"the last line you printed reads as ({_shown(numbers)}), which is "
        f"not the answer: print {what} your script computed.",
    )


class Prints(Kind):
    name = "prints"
    families = SCRIPT
    required = ("answer", "format")
    fields = {
        "answer": {
            "$ref": "#/$defs/identifier",
            "description": "Reference function that returns the answer the script must print.",
        },
        "format": {
            "enum": ["shape", "integer"],
            "description": "How the printed answer is read (see docs/task-writers.md: Script tasks).",
        },
    }

    def read(self, reading: Reading) -> PrintsOptions:
        return read(reading)

    def compares_with_reference_value(self) -> bool:
        return True

    def reference_value(self, reference: Any, check: CheckSpec[PrintsOptions]) -> Any:
        return reference_value(reference, check)

    def run(self, ctx: Context, check: CheckSpec[PrintsOptions]) -> CheckResult:
        return run(ctx, check)


KIND = Prints()
