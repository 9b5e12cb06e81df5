"""Known-mistake diagnosis of one submission: which of the task's declared mistakes its
outputs match (mistakes.py), found after every check has run, so it never changes a score
or what a check sees.

Observations: for each failed visible example or property check whose values differed,
the submission's output on the input its report shows and on up to MORE_CASES more of the
check's cases (smallest first), from extra calls made outside the student's budget, all of
them within DIAGNOSIS_SECONDS. A call that raises, times out or crashes gives no
observation (and a timeout or crash ends the diagnosis: a new worker is not worth it).

A mistake *matches* a check when, on every observation of it, the submission's output
agrees with the mistake's under the check's own comparison (its select and tolerance,
same shape), and on at least one the mistake's output fails the check. It is *diagnosed*
when it matches a failed check and the submission passed no check the mistake fails (who
passed it did not make that mistake). When several are diagnosed, the one that explains
the most checks goes first and each later one keeps the checks not yet explained (none
left: it is not reported), so every explained check names one mistake. Hidden checks take
no part, and the calls go to a new worker when hidden checks ran (grading.py): which
mistake is diagnosed cannot tell what a hidden check sent. Everything is compared on the
trusted side, on the values that came back.
"""
from __future__ import annotations

import time
import types
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generator, cast

from .case_size import smallest_first
from .cases import ReferenceFailed, split_arguments
from .compare import check_values
from .mistakes import Variant, fails, output, profiled, variants
from .result import FAILED, PASSED, CheckResult, Diagnosis
from .sandbox.inside.limits import CallLimit
from .statuses import CRASHED, MISMATCH, OK, TIMEOUT

if TYPE_CHECKING:
    from .grading import Context
    from .spec import CheckSpec

MORE_CASES = 3            # cases observed besides the one shown
DIAGNOSIS_SECONDS = 4.0   # all the diagnosis calls of one submission, at most


@dataclass
class Observation:
    args: dict       # by the names the task gives them
    expected: Any    # the reference's output (or the literal expect:)
    got: Any         # the submission's output, as it came back over the wire


def diagnose(ctx: Context, results: list[CheckResult]) -> tuple[list[Diagnosis], dict[str, str]]:
    """The diagnoses (in task order of their first check) and, for each check one of them
    explains, the mistake's name. Nothing when no visible values check failed."""
    task = ctx.task
    specs = {c.name: c for c in task.checks}
    failed = [specs[r.name] for r in results
              if r.status == FAILED and r.reason == MISMATCH and not r.hidden
              and r.name in specs and profiled(specs[r.name]) and r.name in ctx.shown]
    known = variants(task) if failed else ()
    if not known:
        return [], {}
    observed = _observe(ctx, failed)
    passed = {r.name for r in results if r.status == PASSED}
    explains: dict[str, list[str]] = {}
    for variant in known:
        matched = [name for name, seen in observed.items() if _matches(ctx, variant, specs[name], seen)]
        if matched and not any(fails(task, ctx.reference, variant, specs[name], ctx.use_cache)
                               for name in passed if name in specs and profiled(specs[name])):
            explains[variant.spec.name] = matched
    return _chosen(task, explains)


def _chosen(task, explains: dict[str, list[str]]) -> tuple[list[Diagnosis], dict[str, str]]:
    order = {c.name: i for i, c in enumerate(task.checks)}
    by_name = {m.name: m for m in task.mistakes}
    taken: dict[str, str] = {}
    chosen: list[Diagnosis] = []
    # the most checks first; a tie goes to the mistake declared first (dicts keep that order)
    for name in sorted(explains, key=lambda n: -len(explains[n])):
        own = [c for c in explains[name] if c not in taken]
        if own:
            taken.update(dict.fromkeys(own, name))
            chosen.append(Diagnosis(name, by_name[name].explanation, sorted(own, key=order.__getitem__)))
    chosen.sort(key=lambda d: order[d.checks[0]])
    return chosen, taken


def _matches(ctx: Context, variant: Variant, check: CheckSpec, seen: list[Observation]) -> bool:
    from .checks.calls import compare_output
    options = check.options
    mistake_fails = False
    for observation in seen:
        try:
            mistaken = output(ctx.task, variant, check, observation.args)
        except Exception:   # the mistaken code has no answer here: it explains nothing
            return False
        try:
            agrees = check_values(mistaken, observation.got, options.tolerance, options.select).ok
        except Exception:   # whatever a submission's answer makes the comparison trip over
            return False
        if not agrees:
            return False
        outcome = types.SimpleNamespace(value=mistaken)
        if not compare_output(check, observation.expected, outcome, observation.args).ok:
            mistake_fails = True
    return mistake_fails


def _observe(ctx: Context, checks: list[CheckSpec]) -> dict[str, list[Observation]]:
    """Check name -> what the submission returned on its shown input and a few more cases
    (calls outside the budget, DIAGNOSIS_SECONDS in all; a timeout or crash ends them)."""
    from .checks.examples import check_cases
    sandbox = ctx.sandbox
    stop = time.monotonic() + DIAGNOSIS_SECONDS
    observed: dict[str, list[Observation]] = {}
    with sandbox.outside_budget(fresh_after=float("inf")):   # (no check runs after these calls)
        for check in checks:
            if sandbox.stalled(check.function()) is not None:
                continue
            cases = check_cases(ctx.task, ctx.reference, check, ctx.use_cache)
            wanted = _wanted(ctx, check, cases)
            left = stop - time.monotonic()
            if not wanted or left <= 0:
                break
            case_limits = ctx.call_limits(check, cases)
            widest = max(case_limits, key=lambda limit: limit.seconds)   # (a shrunk input's, as in _shrink)
            limits = [_capped(case_limits[i] if i is not None else widest, left) for i, _ in wanted]
            params = ctx.task.functions[check.function()]
            items = [split_arguments(params, args) for _, (args, _expected) in wanted]
            seen: list[Observation] = []
            outcomes = cast(Generator, sandbox.calls(check.function(), items, limits=limits))
            try:
                for (_, (args, expected)), outcome in zip(wanted, outcomes):
                    if outcome.status in (TIMEOUT, CRASHED):
                        return observed
                    if outcome.status == OK:
                        seen.append(Observation(args, expected, outcome.value))
                    if time.monotonic() > stop:
                        break
            finally:
                outcomes.close()   # (a generator: stops waiting for the calls under way)
                if seen:
                    observed[check.name] = seen
    return observed


def _wanted(ctx: Context, check: CheckSpec, cases) -> list[tuple[int | None, tuple[dict, Any]]]:
    """(index in the case set or None, (args, expected)): the shown input first, then up to
    MORE_CASES more cases of the set, smallest first."""
    shown = ctx.shown[check.name]
    index = next((i for i, args in enumerate(cases.cases) if args is shown), None)
    if index is not None:
        expected = cases.expected[index]
    else:
        try:
            expected = ctx.expected(check, shown)
        except ReferenceFailed:
            return []
    wanted: list[tuple[int | None, tuple[dict, Any]]] = [(index, (shown, expected))]
    more = [i for i in smallest_first(cases.cases) if i != index][:MORE_CASES]
    return wanted + [(i, (cases.cases[i], cases.expected[i])) for i in more]


def _capped(limit: CallLimit, left: float) -> CallLimit:
    """A call's own limit, cut to the diagnosis time left."""
    return CallLimit(min(limit.seconds, left), min(limit.backstop, left), limit.why)
