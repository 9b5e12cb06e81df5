"""Policy checks count only for a submission that does some of the work.

A policy check judges how the work is done, not what it produces (its kind says
``policy=True``: imports, mutation). An empty file imports nothing forbidden and a function
that returns garbage leaves its input alone, so on their own these checks would pay for
doing nothing. A policy check that passed keeps its points only when a check of what the
code computes passed too (a check whose options ``shows_work``: values compared, not just
a type or a shape):

- for a check that calls a function (mutation), a check of that same function's results,
  when the task has one; a right table does not pay for an untouched-but-wrong adder;
- otherwise (imports, or a function no check judges the results of), any such check.

A task with no check of values falls back on its other checks (types, shapes); one with
no check but policy ones has no work to weigh, and its policy checks count as they are.

Otherwise it is skipped with reason ``idle`` and a message that says why. A policy check
that failed on its own keeps its failure (what it found is worth knowing either way).
"""
from __future__ import annotations

import dataclasses

from .result import PASSED, SKIPPED, CheckResult
from .spec import CheckSpec
from .statuses import IDLE


def _work_checks(checks) -> list[CheckSpec]:
    from .checks import kind_of
    judged = [c for c in checks if not kind_of(c).policy]
    return [c for c in judged if c.options.shows_work] or judged


def counted(checks: tuple[CheckSpec, ...] | list[CheckSpec],
            results: list[CheckResult]) -> list[CheckResult]:
    """``results`` (one per check, any order, other lines untouched) with every passed policy
    check that the work done does not support turned into an idle skip."""
    from .checks import kind_of
    specs = {c.name: c for c in checks}
    passed = {r.name for r in results if r.status == PASSED}
    work = _work_checks(checks)
    out = []
    for result in results:
        spec = specs.get(result.name)
        if spec is None or result.status != PASSED or not kind_of(spec).policy:
            out.append(result)
            continue
        own = [c for c in work if spec.call is not None and c.call == spec.call]
        judges = own or work
        if not judges or any(c.name in passed for c in judges):
            out.append(result)
            continue
        doer = f"{spec.call} does" if own else "your file does"
        why = (f"skipped: counts only when {doer} some of the work: no check of what "
               f"{'it returns' if own else 'it computes'} passed")
        out.append(dataclasses.replace(result, status=SKIPPED, score=0.0, message=why,
                                       reason=IDLE))
    return out
