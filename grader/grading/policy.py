"""Policy checks count only for a submission that does some of the work.

A policy check judges how the work is done, not what it produces (its kind says
``counts_only_with_work()``: imports, mutation). An empty file imports nothing forbidden and a function
that returns garbage leaves its input alone, so on their own these checks would pay for
doing nothing. A policy check that passed keeps its points only when a check of what the
code computes passed too (a check whose options ``shows_work``: values compared, not just
a type or a shape):

- for a check that calls a function (mutation), a check of that same function's results,
  when the task has one; a right table does not pay for an untouched-but-wrong adder;
- otherwise (imports, or a function no check judges the results of), any such check.

A pass shows no work when an answer that computes nothing passes it too:

- a script's printed answer (it can be typed in: ``print((5, 8))``; the prints kind's
  options say so, ``shows_work`` False): on a script task only the checks that see the
  arrays the script computed (leaves-array, leaves-sum) show work;
- a values check whose expected outputs (the part it compares, on every one of its cases)
  are one value repeated: ``np.zeros`` or ``np.full`` of the right shape passes it. This is
  decided from the expected outputs on the trusted side (``one_fill``), for every task and
  every check, so an instructor has nothing to declare.

Work with wrong values is still work: a failed values check supports a policy check as a
pass does when its wrong answer came near (``near_miss``: it agrees with the expected output
on more entries than a repeated value or an argument handed back could, as a table with one
sign wrong does; a diagnosed known mistake changes no score, so it is not asked). A zero
table, a copy of the input or random numbers come near nothing. Hidden checks never
count as near: what their inputs draw from a submission stays out of every visible line.

A task with no check of values falls back on its other checks (types, shapes); one with
no check but policy ones has no work to weigh, and its policy checks count as they are.

Otherwise it is skipped with reason ``idle`` and a message that says why. A policy check
that failed on its own keeps its failure (what it found is worth knowing either way).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from grader.grading.compare import numbers_of
from grader.records.result import PASSED, SKIPPED, CheckResult
from grader.records.statuses import IDLE
from grader.task.index_expr import parse_select
from grader.task.spec import CheckSpec
from grader.task.tolerance import Tolerance


def one_fill(expected_outputs: Iterable[Any], select: str | None = None) -> bool:
    """Whether a single value repeated (``np.zeros``, ``np.full``) matches every one of a
    values check's expected outputs, in the part it compares (``select``). Outputs that
    hold no numbers are never one fill."""
    values = []
    for output in expected_outputs:
        numbers = numbers_of(output)
        if numbers is None:
            return False
        if select:
            try:
                numbers = np.asarray(numbers)[parse_select(select)]
            except (IndexError, ValueError):
                return False
        values.append(np.unique(np.ravel(numbers)))
    return bool(values) and np.unique(np.concatenate(values)).size <= 1


def one_fill_checks(
    checks: Iterable[CheckSpec], outputs_of: Callable[[CheckSpec], Iterable[Any]]
) -> frozenset[str]:
    """The values checks whose expected outputs (``outputs_of``) one repeated value
    matches. It depends on the task alone: computed at ``grader freeze`` and stored in the
    freeze, or once per prepared task."""
    return frozenset(
        check.name
        for check in checks
        if check.call is not None
        and check.kind.compares_outputs()
        and getattr(check.options, "compare", None) == "values"
        and one_fill(outputs_of(check), check.options.select)
    )


NEAR_SAMPLE = 4096  # entries a near-miss is judged on (a stride through larger outputs)


def near_miss(
    expected: Any, got: Any, inputs: Iterable[Any], tolerance: Tolerance, select: str | None = None
) -> bool:
    """Whether a wrong output still shows work: it agrees with the expected one on more
    entries than any one value repeated could (``np.zeros``, ``np.full``) or than any of the
    call's array arguments handed back (``return x``), entry by entry (a table with a wrong
    exponent still has its row 0 and first pair right) or as a set of magnitudes (sine and
    cosine swapped, a sign wrong: the same numbers, elsewhere or negated). A zero table, a
    copy of the input or random numbers agree on no more than chance gives them. Decided
    here, on the trusted side, from plain numbers, on at most NEAR_SAMPLE entries."""
    want, have = _numeric(expected, select), _numeric(got, select)
    if want is None or have is None or want.shape != have.shape or want.size < 2:
        return False
    step = max(1, want.size // NEAR_SAMPLE)
    handed_back = [
        a for a in (_numeric(arg, select) for arg in inputs) if a is not None and a.shape == want.shape
    ]
    want, have = want.ravel()[::step], have.ravel()[::step]
    handed_back = [a.ravel()[::step] for a in handed_back]

    def agreeing(a: np.ndarray, b: np.ndarray) -> int:
        with np.errstate(invalid="ignore", over="ignore"):
            return int(np.count_nonzero(np.isclose(a, b, rtol=tolerance.rtol, atol=tolerance.atol)))

    for measure in (lambda v: v, lambda v: np.sort(np.abs(v))):
        target = measure(want)
        agree = agreeing(measure(have), target)
        best_fill = _largest_group(target, tolerance)  # what one repeated value agrees on
        if agree >= 2 and agree > max([best_fill] + [agreeing(measure(a), target) for a in handed_back]):
            return True
    return False


def _largest_group(values: np.ndarray, tolerance: Tolerance) -> int:
    """The most entries one value can agree with (within tolerance): what a repeated value
    would get right."""
    finite = np.sort(values[np.isfinite(values)])
    if finite.size == 0:
        return 0
    reach = tolerance.atol + tolerance.rtol * np.abs(finite)
    counts = np.searchsorted(finite, finite + 2 * reach, side="right") - np.arange(finite.size)
    return int(max(counts.max(), np.count_nonzero(np.isnan(values))))


def _numeric(value: Any, select: str | None) -> np.ndarray | None:
    """The part of a value a values check compares, as floats; None when it holds no numbers."""
    numbers = numbers_of(value)
    if numbers is None:
        return None
    try:
        numbers = np.asarray(numbers)[parse_select(select)] if select else np.asarray(numbers)
    except (IndexError, ValueError):
        return None
    if numbers.dtype.kind not in "fiub":
        return None
    return numbers.astype(float)


def _shows_work(check: CheckSpec, filled: frozenset[str]) -> bool:
    return check.options.shows_work and check.name not in filled


def _work_checks(checks: Iterable[CheckSpec], filled: frozenset[str]) -> list[CheckSpec]:

    judged = [c for c in checks if not c.kind.counts_only_with_work()]
    return [c for c in judged if _shows_work(c, filled)] or judged


def judges(
    spec: CheckSpec, checks: Iterable[CheckSpec], filled: frozenset[str] = frozenset()
) -> list[CheckSpec]:
    """The checks whose pass lets the policy check ``spec`` count: those of the same
    function's work, else any check of the work (empty: it counts as it is)."""
    work = _work_checks(checks, filled)
    own = [c for c in work if spec.call is not None and c.call == spec.call]
    return own or work


def skip_idle_policy_checks(
    checks: tuple[CheckSpec, ...] | list[CheckSpec],
    results: list[CheckResult],
    filled: frozenset[str] = frozenset(),
    later: frozenset[str] = frozenset(),
    near: frozenset[str] = frozenset(),
) -> list[CheckResult]:
    """``results`` (one per check, any order, other lines untouched) with every passed policy
    check that the work done does not support turned into an idle skip. ``filled`` names
    the checks whose expected outputs one repeated value matches (``one_fill``); ``later``
    the policy checks a kit leaves to final grading, whose supporters it cannot run
    (final_grading.py): left as they are; ``near`` the failed checks of the work whose
    wrong answer still showed work (``near_miss``): they support
    a policy check as a pass does."""

    specs = {c.name: c for c in checks}
    passed = {r.name for r in results if r.status == PASSED} | set(near)
    out = []
    for result in results:
        spec = specs.get(result.name)
        if (
            spec is None
            or result.status != PASSED
            or not spec.kind.counts_only_with_work()
            or result.name in later
        ):
            out.append(result)
            continue
        supporters = judges(spec, checks, filled)
        own = bool(supporters) and spec.call is not None and all(c.call == spec.call for c in supporters)
        if not supporters or any(c.name in passed for c in supporters):
            out.append(result)
            continue
        doer = f"{spec.call} does" if own else "your file does"
        why = (
            f"skipped: counts only when {doer} some of the work: no check of what "
            f"{'it returns' if own else 'it computes'} passed or came near"
        )
        out.append(dataclasses.replace(result, status=SKIPPED, score=0.0, message=why, reason=IDLE))
    return out
