"""Known-mistake diagnosis of one submission: which of the task's declared mistakes its
outputs match (mistakes.py), found after every check has run, so it never changes a score
or what a check sees.

Observations: for each failed visible example or property check whose values differed,
the submission's output on the input its report shows, on the SMALLER_CASES smallest other
cases of the check and on one of middle size (a tiny table hides what grows with the width),
from extra calls on a budget of their own (DIAGNOSIS_SECONDS in all, whatever the checks
left); each is judged as it arrives and dropped. A call that raises gives no observation;
a timeout, crash, spent budget or malformed answer ends the diagnosis.

A mistake *matches* a check when, on every observation of it, the submission's output
agrees with the mistake's under the check's own comparison (its select and tolerance,
same shape), and on at least one the mistake's output fails the check. It is *diagnosed*
when it matches a failed check and the submission passed no check the mistake fails (who
passed it did not make that mistake). When several are diagnosed, the one that explains
the most checks goes first and each later one keeps the checks not yet explained (none
left: it is not reported), so every explained check names one mistake. Hidden checks take
no part, and the calls go to a new worker when hidden checks ran (run.py): which
mistake is diagnosed cannot tell what a hidden check sent. Everything is compared on the
trusted side, on the values that came back.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from grader.cases import CaseSet, ReferenceFailed, split_arguments
from grader.grading.compare import check_values
from grader.grading.mistakes import Variant, passes, profiled
from grader.records.limits import CallLimit
from grader.records.result import FAILED, PASSED, CheckResult, Diagnosis
from grader.records.statuses import MISMATCH, OK, RAISED
from grader.task.case_size import smallest_first
from grader.task.deadline import TooSlow

if TYPE_CHECKING:
    from grader.grading.context import Context
    from grader.task.spec import CheckSpec, Task

SMALLER_CASES = 2  # the smallest cases observed besides the one shown...
MORE_CASES = SMALLER_CASES + 1  # ...and one of middle size (small ones hide what grows)
DIAGNOSIS_SECONDS = 4.0  # all the diagnosis calls of one submission, at most


@dataclass
class Observation:
    args: dict  # by the names the task gives them
    expected: Any  # the reference's output (or the literal expect:)
    got: Any  # the submission's output, as it came back over the wire
    of_the_class: bool = False  # a case of the check's set (the same for every student)


@dataclass
class _Match:
    """How one mistake fares on one check's observations so far (an observation is judged
    when it arrives and then dropped: a class of huge answers is never held at once)."""

    agrees: bool = True  # the submission's output agreed with the mistake's on each
    mistake_fails: bool = False  # on at least one, the mistake's output fails the check
    seen: int = 0

    @property
    def explains(self) -> bool:
        return self.seen > 0 and self.agrees and self.mistake_fails


def diagnose(ctx: Context, results: list[CheckResult]) -> tuple[list[Diagnosis], dict[str, str]]:
    """The diagnoses (in task order of their first check) and, for each check one of them
    explains, the mistake's name. Nothing when no visible values check failed."""
    task = ctx.task
    specs = {c.name: c for c in task.checks}
    failed = [
        specs[r.name]
        for r in results
        if r.status == FAILED
        and r.reason == MISMATCH
        and not r.hidden
        and r.name in specs
        and profiled(specs[r.name])
        and r.name in ctx.shown
    ]
    runs = ctx.prepared.mistakes
    known = runs.variants if failed else ()
    # who passed a check the mistake fails did not make that mistake: out before any call
    passed = [
        specs[r.name] for r in results if r.status == PASSED and r.name in specs and profiled(specs[r.name])
    ]
    candidates = [
        v
        for v in known
        if not any(runs.fails(v, check, ctx.check_cases(check)) for check in passed)
        and runs.too_slow(v) is None
    ]  # (mistaken code past its deadline: validate says so)
    if not candidates:
        return [], {}
    matches = {(v.spec.name, c.name): _Match() for v in candidates for c in failed}

    def take(check: CheckSpec, observation: Observation) -> bool:
        """Judge one observation for every mistake still in the running on ``check``;
        whether any still is (else the check's remaining calls are not made)."""
        running = False
        for variant in candidates:
            match = matches[(variant.spec.name, check.name)]
            if match.agrees:
                _judge(ctx, variant, check, observation, match)
                running = running or match.agrees
        return running

    _observe(ctx, failed, take)
    explains = {
        v.spec.name: [c.name for c in failed if matches[(v.spec.name, c.name)].explains] for v in candidates
    }
    return _chosen(task, {name: checks for name, checks in explains.items() if checks})


def _chosen(task: Task, explains: dict[str, list[str]]) -> tuple[list[Diagnosis], dict[str, str]]:
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


def _judge(ctx: Context, variant: Variant, check: CheckSpec, observation: Observation, match: _Match) -> None:
    """One observation of ``check`` against one mistake, into ``match``."""
    options = check.options
    match.seen += 1
    try:
        runs = ctx.prepared.mistakes
        mistaken = (
            runs.kept_output(variant, check, observation.args)
            if observation.of_the_class
            else runs.output(variant, check, observation.args)
        )
    except (Exception, TooSlow):  # the mistaken code has no answer here: it explains nothing
        match.agrees = False
        return
    try:
        match.agrees = check_values(mistaken, observation.got, options.tolerance, options.select).ok
    except Exception:  # whatever a submission's answer makes the comparison trip over
        match.agrees = False
    if match.agrees and not passes(check, observation.expected, mistaken, observation.args):
        match.mistake_fails = True


def _observe(ctx: Context, checks: list[CheckSpec], take: Callable[[CheckSpec, Observation], bool]) -> None:
    """Hands ``take`` what the submission returned on each check's shown input and a few
    more cases, as each answer arrives (calls on a budget of their own, DIAGNOSIS_SECONDS
    in all, a new worker's load included; any answer but a value or an exception ends them;
    a check no mistake can still explain gets no more)."""

    sandbox = ctx.sandbox
    stop = time.monotonic() + DIAGNOSIS_SECONDS
    with sandbox.own_budget(DIAGNOSIS_SECONDS):  # (not what the checks, hidden ones too, left)
        for check in checks:
            if sandbox.stalled(check.function()) is not None:
                continue
            cases = ctx.check_cases(check)
            wanted = _wanted(ctx, check, cases)
            left = stop - time.monotonic()
            if not wanted or left <= 0:
                return
            case_limits = ctx.call_limits(check, cases)
            widest = max(case_limits, key=lambda limit: limit.seconds)  # (a shrunk input's, as in _shrink)
            limits = [_capped(case_limits[i] if i is not None else widest, left) for i, _ in wanted]
            params = ctx.task.functions[check.function()]
            # what the checks already had it answer is taken as it was, not asked again
            asked: list[tuple[int | None, tuple[dict, Any]]] = []
            asked_limits: list[CallLimit] = []
            running = True
            for (index, (args, expected)), limit in zip(wanted, limits):
                answer = ctx.answer_on(check, args)
                if answer is None:
                    asked.append((index, (args, expected)))
                    asked_limits.append(limit)
                elif running and not answer.raised:
                    running = take(check, Observation(args, expected, answer.value, index is not None))
            if not running or not asked:
                continue
            items = [split_arguments(params, args) for _, (args, _expected) in asked]
            outcomes = cast(Generator, sandbox.calls(check.function(), items, limits=asked_limits))
            try:
                for (index, (args, expected)), outcome in zip(asked, outcomes):
                    if outcome.status not in (OK, RAISED):  # timeout, crash, budget, malformed
                        return
                    if outcome.status == OK and not take(
                        check, Observation(args, expected, outcome.value, index is not None)
                    ):
                        break
                    if time.monotonic() > stop:
                        break
            finally:
                outcomes.close()  # (a generator: stops waiting for the calls under way)


def _wanted(ctx: Context, check: CheckSpec, cases: CaseSet) -> list[tuple[int | None, tuple[dict, Any]]]:
    """(index in the case set or None, (args, expected)): the shown input first, then the
    SMALLER_CASES smallest other cases of the set and one of middle size."""
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
    others = [i for i in smallest_first(cases.cases) if i != index]
    more = others[:SMALLER_CASES]
    middle = others[len(others) // 2] if others else None
    if middle is not None and middle not in more:
        more.append(middle)
    return wanted + [(i, (cases.cases[i], cases.expected[i])) for i in more]


def _capped(limit: CallLimit, left: float) -> CallLimit:
    """A call's own limit, cut to the diagnosis time left."""
    return CallLimit(min(limit.seconds, left), min(limit.backstop, left), limit.why)
