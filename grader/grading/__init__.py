"""Grading: one submission against one task. The rest of the grader uses only what this
face names; ``checks/`` (the check kinds, one module each, one registry line) and
``shrinking/`` (the smallest failing input) are grading's own.

- run.py: one grade (load, checks in order, hidden last, skips, the diagnosis);
- options.py: how a grade is run and in which tier (``tier_for``, the kit rule included);
- prepared.py: the task made ready once (reference, cases, limits, mistakes), shared by a class;
- context.py: what a check may use; compare.py, pictures.py: verdicts and their pictures;
- policy.py: checks of how count only when work is done; final_grading.py: what a kit leaves;
- mistakes.py, diagnosis.py: known mistakes and one submission's likely cause;
- redact.py: what students may see of hidden checks; load_check.py: the report's first line;
- prestart.py: grader check's worker started before this stack is imported;
- speedups.py: the speed-ups (the head start, the shrink lanes, the shrink cache), one switch.

Light on import: ``GradeOptions``, ``tier_for``, ``head_start``, the speed-ups' switch and
``for_students`` are
needed where numpy and the checks must not load yet (the command line, the head start);
the rest is imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from grader.grading.options import GradeOptions, is_kit, kit_at_home, tier_for
from grader.grading.prestart import HeadStart, head_start
from grader.grading.redact import HIDDEN_NOTE, for_students
from grader.grading.speedups import chosen_speedups, starts_ahead

if TYPE_CHECKING:
    from grader.grading.checks import KINDS
    from grader.grading.checks.typed_in import Numbers, typed_in
    from grader.grading.compare import check_values
    from grader.grading.final_grading import header_lines, in_a_kit, score_here
    from grader.grading.load_check import LOAD_CHECK, RUN_CHECK
    from grader.grading.mistakes import MistakeRuns, variants
    from grader.grading.policy import one_fill_checks
    from grader.grading.prepared import PreparedTask, prepare
    from grader.grading.run import grade

# name -> the module that defines it, imported when the name is first asked for
_ON_FIRST_USE = {
    "KINDS": "grader.grading.checks",
    "LOAD_CHECK": "grader.grading.load_check",
    "MistakeRuns": "grader.grading.mistakes",
    "Numbers": "grader.grading.checks.typed_in",
    "PreparedTask": "grader.grading.prepared",
    "RUN_CHECK": "grader.grading.load_check",
    "check_values": "grader.grading.compare",
    "grade": "grader.grading.run",
    "header_lines": "grader.grading.final_grading",
    "in_a_kit": "grader.grading.final_grading",
    "one_fill_checks": "grader.grading.policy",
    "prepare": "grader.grading.prepared",
    "score_here": "grader.grading.final_grading",
    "typed_in": "grader.grading.checks.typed_in",
    "variants": "grader.grading.mistakes",
}

__all__ = [
    "check_values",
    "chosen_speedups",
    "for_students",
    "grade",
    "GradeOptions",
    "head_start",
    "header_lines",
    "HeadStart",
    "HIDDEN_NOTE",
    "in_a_kit",
    "is_kit",
    "KINDS",
    "kit_at_home",
    "LOAD_CHECK",
    "MistakeRuns",
    "Numbers",
    "one_fill_checks",
    "prepare",
    "PreparedTask",
    "RUN_CHECK",
    "score_here",
    "starts_ahead",
    "tier_for",
    "typed_in",
    "variants",
]


def __getattr__(name: str) -> Any:
    module = _ON_FIRST_USE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # (__import__, not importlib.import_module: the same path as an import statement, which
    # python -X importtime lists, so that tests/unit/test_startup_imports.py sees it)
    value = getattr(__import__(module, fromlist=[name]), name)
    globals()[name] = value  # (asked once)
    return value
