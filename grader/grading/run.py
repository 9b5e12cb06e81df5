"""Grades one submission against one task: load it in the sandbox, then run every check in
order. A check whose function is missing, or whose prerequisites did not pass, is skipped
with one clear reason instead of failing with a wall of errors."""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable, Sequence

from grader import __version__
from grader.cases import ReferenceFailed
from grader.disk import cache_root
from grader.grading import final_grading, speedups
from grader.grading.checks.case_runs import settled, shrunk
from grader.grading.checks.script_work import wanted_shapes
from grader.grading.context import Context, ScriptRun
from grader.grading.diagnosis import diagnose
from grader.grading.load_check import (
    RUN_CHECK,
    failed_cells,
    load_result,
    not_drawn,
    run_result,
    undefined_because,
    unreadable,
)
from grader.grading.options import GradeOptions, tier_for  # (also imported from here: batch, ci, validate)
from grader.grading.policy import skip_idle_policy_checks
from grader.grading.prepared import PreparedTask, prepare
from grader.grading.prestart import HeadStart
from grader.grading.shrinking.lanes import NOT_SHRUNK, shrink_both_ways
from grader.records.result import ERROR, FAILED, PASSED, SKIPPED, CheckResult, Result, total
from grader.records.statuses import (
    IMPORTS,
    JUDGE,
    MISMATCH,
    TASK,
    TIMED_OUT_BEFORE,
)
from grader.sandbox import Sandbox, downgrade_note, refuse_open_paths, workers
from grader.sandbox import tier as sandbox_tier
from grader.student_text import name as visible_name
from grader.submission.file import SubmissionFile, read_submission
from grader.submission.notebook import failed_cells_note
from grader.submission.source_scan import read_source
from grader.task import frameworks
from grader.task.spec import CheckSpec, Task


def grade(
    task: Task,
    submission: str | SubmissionFile,
    options: GradeOptions = GradeOptions(),
    prepared: PreparedTask | None = None,
    started: HeadStart | None = None,
) -> Result:
    """Grade one submission, given as a path (read here, once) or as bytes already read;
    ``prepared`` is the task prepared already (a batch's, a validate's), else it is
    prepared here, while the worker starts; ``started``: a worker started ahead
    (prestart.py), taken as the first worker if it fits."""
    start = time.monotonic()
    if not isinstance(submission, SubmissionFile):
        submission = read_submission(submission)
    # a .py file's bytes, or a notebook's code cells, and the scan of them (bounded.py)
    source = read_source(
        submission,
        task.allowed_imports + task.stdlib_imports,
        numbers=any(c.kind.answer_is_private() for c in task.checks),
        display=task.display_imports,
        tested=tuple(task.functions) if task.kind == "functions" else (),
    )
    tier = tier_for(options, task)
    if sandbox_tier(tier).file_permissions_are_walls:
        refuse_open_paths([task.folder, cache_root()])  # (every cache: cases, times, shrink paths)
    # The frameworks the task allows and the file imports: imported by its worker (or the
    # batch's fork server) before the student's clock starts.
    limits = dataclasses.replace(
        task.limits,
        **options.limits,
        preload=frameworks.preload(task.allowed_imports, [name for name, _line in source.scan.imports]),
    )
    with (
        workers(limits, tier, options.warm_workers) as spawn,
        Sandbox(
            source.code,
            list(task.functions),
            limits,
            tier,
            started.spawner(spawn) if started is not None else spawn,
            source_map=source.source_map,
        ) as sandbox,
    ):
        sandbox.start()  # the worker imports numpy while this process does the same

        if prepared is None:  # cases and expected outputs: ready before the worker is
            prepared = prepare(task, options.use_cache, profile_mistakes=False)
        ctx = Context(prepared, sandbox, source, [])
        ctx.shrink_lanes = speedups.uses_shrink_lanes(options, sandbox_tier(tier).plain_process)
        ctx.shrink_cache = speedups.uses_shrink_cache(options)
        sandbox.answer_bytes = prepared.answer_bytes()
        sandbox.display = list(task.display_imports)
        sandbox.start_budget()  # the student's time starts now, not while cases were made
        because: dict[str, str] = {}  # why a function a failed notebook cell left is undefined
        if source.text is None:  # never run what Python (or the import scan) cannot read
            outcome = None
            load, defined = unreadable(task, source.problem), set()
        elif task.kind == "script":
            graded = [c for c in task.checks if c.name in prepared.graded_here]
            sandbox.wanted_shapes = wanted_shapes(ctx, graded)
            outcome = sandbox.run_script(prepared.times.script_limit(limits))
            load = run_result(task, outcome)
            if source.uncompiled:  # (a script notebook runs whole: only these are its cells' own)
                said = failed_cells_note(tuple(text for _cell, text in source.uncompiled))
                load = dataclasses.replace(load, message="; ".join(filter(None, [said, load.message])))
            defined = set() if load.status == ERROR else {"script"}
            if isinstance(outcome.value, dict):
                ctx.script = ScriptRun(outcome.stdout, outcome.value.get("arrays", {}))
        else:
            outcome = sandbox.load()
            cells, more = failed_cells(outcome, source)
            load, defined = load_result(task, outcome, cells, more)
            because = undefined_because(task, defined, cells, source)
        # what was not drawn, and what of a notebook was left out: said on the first line of the report
        notes = [n for n in (not_drawn(task, outcome),) if n] + list(source.notes)
        if notes:
            load = dataclasses.replace(load, message="; ".join(filter(None, [load.message, *notes])))
        ctx.runtime_imports = sandbox.evidence  # grows while checks run; read by imports checks
        later = final_grading.in_a_kit(task.checks) if prepared.kit else {}

        order = _in_running_order(task.checks)
        done = [load]

        def run(checks: list[CheckSpec]) -> None:
            for check in checks:
                if check.kind.judges_the_file():
                    _shrink_now(ctx, done)  # (it weighs what every call before it showed)
                if check.name in later and not later[check.name].runs:
                    done.append(final_grading.not_run(check, later[check.name]))
                else:
                    done.append(_run_or_skip(ctx, check, load, defined, done, because))
            _shrink_now(ctx, done)

        # A visible check's failure is shrunk once the other visible checks have run: the
        # worker computes them while this process imports Hypothesis (checks/calls.py).
        ctx.shrinks_later = []
        run([c for c in order if not c.hidden])
        ctx.shrinks_later = None
        # The likely cause is found from the visible checks, before any hidden input is
        # sent: no process of this submission has seen one yet, so nothing it could leave
        # on the machine (a file's access time, the pid counter) can tell the diagnosis one.
        # It changes no score.
        diagnoses, explained = diagnose(ctx, done)
        hidden = [c for c in order if c.hidden]
        if hidden:
            # Hidden checks run last, in a new worker: whatever inputs they send cannot be
            # recorded by the submission and shown back in a visible check.
            sandbox.renew()
            run(hidden)
        printed = (
            frameworks.shown_output(outcome.stdout + outcome.stderr, task.allowed_imports)
            if outcome is not None
            else ""
        )
        filled = _filled(ctx, done[1:])
    by_name = {
        r.name: r
        for r in skip_idle_policy_checks(task.checks, done[1:], filled, frozenset(later), frozenset(ctx.near))
    }
    by_name.update(
        {
            name: final_grading.decided_later(by_name[name], waits)
            for name, waits in later.items()
            if waits.runs
        }
    )
    results = [load] + [by_name[c.name] for c in task.checks]  # reported in the task's order
    results = [
        dataclasses.replace(r, mistake=explained[r.name]) if r.name in explained else r for r in results
    ]
    return total(
        task.id,
        visible_name(submission.path),
        tier,
        results,
        load_failed=not defined,
        task_version=task.version,
        output=printed,
        seconds=time.monotonic() - start,
        isolation_note=downgrade_note(tier),
        grader_version=__version__,
        cases_digest=prepared.cases_digest,
        kit=prepared.kit,
        diagnoses=diagnoses,
        definitions=source.scan.defined_at(task.functions),
    )


def _filled(ctx: Context, results: list[CheckResult]) -> frozenset[str]:
    """The passed values checks that a single repeated value passes too (policy.one_fill)."""
    passed = {r.name for r in results if r.status == PASSED}
    return ctx.prepared.one_fill_checks() & passed


def _in_running_order(checks: Sequence[CheckSpec]) -> list[CheckSpec]:
    """Every visible check first, then the hidden ones (each group in the task's order);
    in each group, imports checks last, so that they weigh what the submission was seen
    doing in every call before them."""
    needed = {name for c in checks for name in c.needs}

    def group(hidden: bool) -> list[CheckSpec]:
        members = [c for c in checks if c.hidden == hidden]
        late = [c for c in members if c.kind.judges_the_file() and c.name not in needed]
        return [c for c in members if c not in late] + late

    return group(False) + group(True)


def _shrink_now(ctx: Context, done: list[CheckResult]) -> None:
    """Shrink the failures waiting (ctx.shrinks_later), in the order found: each check's
    result is replaced by the one that shows the smallest failing input."""
    if not ctx.shrinks_later:
        return
    waiting, ctx.shrinks_later = ctx.shrinks_later, []
    at = {r.name: i for i, r in enumerate(done)}
    found_by_lanes = shrink_both_ways(ctx, waiting) if ctx.shrink_lanes else [NOT_SHRUNK] * len(waiting)
    for found, smaller in zip(waiting, found_by_lanes):
        settle = (
            functools.partial(shrunk, ctx, found)
            if smaller is NOT_SHRUNK
            else functools.partial(settled, ctx, found, smaller)
        )
        done[at[found.check.name]] = _judging(ctx, found.check, settle)


def _run_or_skip(
    ctx: Context,
    check: CheckSpec,
    load: CheckResult,
    defined: set[str],
    done: list[CheckResult],
    because: dict[str, str] | None = None,
) -> CheckResult:

    skipped = None
    if load.status == ERROR and not check.kind.judges_the_file():  # static checks still run
        skipped = f"your file did not {'run' if load.name == RUN_CHECK else 'load'} (see '{load.name}' above)"
    elif check.call is not None and check.call not in defined:
        skipped = f"{check.call} is not defined in your file"
        if because and check.call in because:  # a notebook cell failed: it says which
            skipped += f": {because[check.call]}"
    elif check.call is not None and (limit := ctx.sandbox.stalled(check.call)) is not None:
        # One endless loop costs one timeout, not one per check that calls it.
        return CheckResult(
            check.name,
            SKIPPED,
            0.0,
            check.points,
            description=check.description,
            function=check.call,
            hidden=check.hidden,
            reason=TIMED_OUT_BEFORE,
            message=f"not run: {check.call} timed out (limit {limit.seconds:.3g} s: "
            f"{limit.why}) and has not finished any call in time",
        )
    else:
        status = {r.name: r.status for r in done}
        unmet = [n for n in check.needs if status.get(n) != PASSED]
        if unmet:
            skipped = f"needs {', '.join(repr(n) for n in unmet)} to pass first"
    if skipped:
        return CheckResult(
            check.name,
            SKIPPED,
            0.0,
            check.points,
            message=f"skipped: {skipped}",
            description=check.description,
            function=check.call,
            hidden=check.hidden,
        )

    return _judging(ctx, check, lambda: check.kind.run(ctx, check))


def _judging(ctx: Context, check: CheckSpec, judge: Callable[[], CheckResult]) -> CheckResult:
    """The check's result as ``judge`` finds it, with its hint; whatever goes wrong while
    judging what the submission produced is this check's error."""
    try:
        return with_hint(check, judge())
    except ReferenceFailed as exc:
        return CheckResult(
            check.name,
            ERROR,
            0.0,
            check.points,
            hidden=check.hidden,
            message=f"the task itself is broken, not your code: {exc}. Tell your instructor.",
            description=check.description,
            reason=TASK,
        )
    except Exception as exc:  # whatever a submission made a check trip over: its error only
        return CheckResult(
            check.name,
            ERROR,
            0.0,
            check.points,
            hidden=check.hidden,
            function=check.call,
            description=check.description,
            reason=JUDGE,
            message=f"this check could not judge what your code produced "
            f"({type(exc).__name__}: {str(exc)[:300]}); no points for it. "
            "If your code is right, tell your instructor.",
        )


HINTED = (MISMATCH, IMPORTS, JUDGE, None)  # reasons a check's hint is about (None: a kind without)


def with_hint(check: CheckSpec, result: CheckResult) -> CheckResult:
    """The task's hint for a check, after the message of a failure in what the code produced
    or imported (a hint is advice about that: not about a timeout, a crash or a budget, nor
    a broken task or an unverified pass). A hidden check's message, hint included, is
    withheld from students (redact.py)."""
    if not check.hint or result.status not in (FAILED, ERROR) or result.reason not in HINTED:
        return result
    message = result.message.rstrip()
    return dataclasses.replace(
        result, message=f"{message} Hint: {check.hint}" if message else f"Hint: {check.hint}"
    )
