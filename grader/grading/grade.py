"""Grades one submission against one task: load it in the sandbox, then run every check in
order. A check whose function is missing, or whose prerequisites did not pass, is skipped
with one clear reason instead of failing with a wall of errors."""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np

from grader import __version__
from grader.grading import final_grading, frozen, mistakes
from grader.grading.call_limits import CallLimit, derived_limit, pooled, reference_seconds, script_limit
from grader.grading.case_set import CaseSet, CasesFailed, ReferenceFailed
from grader.grading.cases import _versions, cache_dir, case_set, expected_output, reference_value
from grader.grading.checks.calls import describe_error, error_cell, error_line
from grader.grading.checks.examples import check_cases
from grader.grading.checks.script_work import wanted_shapes
from grader.grading.checks.typed_in import Numbers
from grader.grading.diagnosis import diagnose
from grader.grading.kinds import kind_of
from grader.grading.policy import counted, one_fill
from grader.grading.source_scan import read_source
from grader.records.result import ERROR, FAILED, PASSED, SKIPPED, CheckResult, Result, total
from grader.records.statuses import (
    CRASHED,
    ENVIRONMENT,
    IMPORTS,
    JUDGE,
    MISMATCH,
    OK,
    RAISED,
    TASK,
    TIMED_OUT_BEFORE,
    TIMEOUT,
    UNDEFINED,
    UNREADABLE,
    Reason,
    call_reason,
)
from grader.records.worker_error import WorkerError
from grader.sandbox import CallOutcome, Sandbox, choose_tier, downgrade_note, refuse_open_paths, workers
from grader.sandbox import tier as sandbox_tier
from grader.student_text import clip
from grader.student_text import name as visible_name
from grader.submission.file import SubmissionFile, read_submission
from grader.submission.python_file import PythonSource
from grader.submission.source_numbers import SourceNumbers
from grader.task import frameworks
from grader.task.reference import load_reference
from grader.task.spec import CheckSpec, SpecError, Task

LOAD_CHECK = "loads"  # function tasks: the file imports and defines the functions
RUN_CHECK = "runs"  # script tasks: the script runs to its end


@dataclass
class Options:
    isolation: str = "auto"  # auto or a tier's name (sandbox.NAMES)
    others_work: bool = False  # someone else's work: never the rlimits tier
    shared_state: bool = False  # ... nor a tier whose workers could share state, unless accepted
    limits: dict = field(default_factory=dict)  # overrides of the task's limits
    use_cache: bool = True  # reuse generated cases across runs
    warm_workers: bool = False  # fork workers from a warm server (batch)


@dataclass
class ScriptRun:
    """What a script task's submission produced: its output and the arrays it computed."""

    stdout: str = ""
    arrays: dict = field(default_factory=dict)  # what it is -> (ndarray, type name, role)


@dataclass
class Context:
    """What a check may use: the task, the sandbox, the trusted reference."""

    task: Task
    sandbox: Sandbox
    reference: ModuleType | None  # None: a kit, which has frozen cases instead
    source: PythonSource
    runtime_imports: list[str]
    use_cache: bool
    script: ScriptRun = field(default_factory=ScriptRun)
    # the arguments of the input each failed visible call check shows (diagnosis.py); kept
    # here, on the trusted side, never in a result
    shown: dict[str, dict] = field(default_factory=dict)
    # the failed visible checks of the work whose wrong answer still showed work (policy.py)
    near: set[str] = field(default_factory=set)
    _numbers: Numbers | None = field(default=None, repr=False)

    def source_numbers(self) -> Numbers:
        """The numbers the submission's source holds, written or encoded, ready for the
        typed-in rule (source_numbers.py, checks/typed_in.py): read once, when asked."""
        if self._numbers is None:
            # (read in the bounded child with the rest, source_scan.py; a file it could not
            # read runs no check that asks)
            self._numbers = Numbers(self.source.numbers or SourceNumbers((), (), capped=True))
        return self._numbers

    def case_set(self, check: CheckSpec) -> CaseSet:

        return case_set(self.task, self.reference, check, self.use_cache)

    def reference_value(self, check: CheckSpec) -> Any:

        return reference_value(self.task, self.reference, check)

    def expected(self, check: CheckSpec, args: dict[str, Any]) -> Any:
        if self.reference is None:  # (a kit: no reference answers an input it has not frozen)
            raise ReferenceFailed("no reference solution here (a kit) to answer this input")
        return expected_output(self.task, self.reference, check, args)

    def call_limits(self, check: CheckSpec, cases: CaseSet) -> list[CallLimit]:
        """Each case's call limit (call_limits.py), in the order of ``cases.cases``."""

        limits = self.sandbox.limits
        times = (
            reference_seconds(self.task, self.reference, check, cases, self.use_cache)
            if limits.call_limit != "absolute"
            else None
        )
        times = None if times is None else pooled(self.task, check, cases, times)
        return [derived_limit(limits, None if times is None else times[i]) for i in range(len(cases.cases))]


def grade(task: Task, submission: str | SubmissionFile, options: Options = Options()) -> Result:
    """Grade one submission, given as a path (read here, once) or as bytes already read."""
    start = time.monotonic()
    if not isinstance(submission, SubmissionFile):
        submission = read_submission(submission)
    # a .py file's bytes, or a notebook's code cells, and the scan of them (bounded.py)
    source = read_source(
        submission,
        task.allowed_imports + task.stdlib_imports,
        numbers=any(kind_of(c).expected_private for c in task.checks),
        display=task.display_imports,
    )
    tier = choose_tier(options.isolation, options.others_work, options.shared_state)
    if sandbox_tier(tier).file_permissions_are_walls:
        refuse_open_paths([task.folder, cache_dir()])
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
            source.code, list(task.functions), limits, tier, spawn, source_map=source.source_map
        ) as sandbox,
    ):
        sandbox.start()  # the worker imports numpy while this process does the same

        reference = load_reference(task)
        ctx = Context(task, sandbox, reference, source, [], options.use_cache)
        prepare(
            task, options, profile_mistakes=False
        )  # cases and expected outputs: ready before the worker is
        sandbox.answer_bytes = answer_bytes(task, reference, options.use_cache)
        sandbox.display = list(task.display_imports)
        sandbox.start_budget()  # the student's time starts now, not while cases were made
        if source.text is None:  # never run what Python (or the import scan) cannot read
            outcome = None
            load, defined = _unreadable(task, source.problem), set()
        elif task.kind == "script":
            sandbox.wanted_shapes = wanted_shapes(ctx, _graded_here(task))

            outcome = sandbox.run_script(script_limit(task, reference, limits))
            load = _run_result(task, outcome)
            defined = set() if load.status == ERROR else {"script"}
            if isinstance(outcome.value, dict):
                ctx.script = ScriptRun(outcome.stdout, outcome.value.get("arrays", {}))
        else:
            outcome = sandbox.load()
            load, defined = _load_result(task, outcome)
        # what was not drawn, and what of a notebook was left out: said on the first line of the report
        notes = [n for n in (_not_drawn(task, outcome),) if n] + list(source.notes)
        if notes:
            load = dataclasses.replace(load, message="; ".join(filter(None, [load.message, *notes])))
        ctx.runtime_imports = sandbox.evidence  # grows while checks run; read by imports checks
        later = final_grading.in_a_kit(task.checks) if _is_kit(task) else {}

        order = _in_running_order(task.checks)
        done = [load]

        def run(checks: list[CheckSpec]) -> None:
            for check in checks:
                if check.name in later and not later[check.name].runs:
                    done.append(final_grading.not_run(check, later[check.name]))
                else:
                    done.append(_run_or_skip(ctx, check, load, defined, done))

        run([c for c in order if not c.hidden])
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
        r.name: r for r in counted(task.checks, done[1:], filled, frozenset(later), frozenset(ctx.near))
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
        cases_digest=cases_digest(task),
        kit=_is_kit(task),
        diagnoses=diagnoses,
        definitions=source.scan.defined_at(task.functions),
    )


def _not_drawn(task: Task, outcome: CallOutcome | None) -> str:
    """The note for a submission that imported a display library this machine does not have:
    its stand-in drew nothing, and that costs nothing (inside/display.py). The names are the
    worker's word, so only the task's own display libraries are named."""
    value = getattr(outcome, "value", None)
    served = value.get("stand_ins", []) if isinstance(value, dict) else []
    names = [name for name in task.display_imports if name in served]
    if not names:
        return ""
    libraries = " and ".join(names)
    one = len(names) == 1
    return (
        f"note: {libraries} {'is' if one else 'are'} not installed where this was graded, so "
        f"what your file draws with {'it' if one else 'them'} was not drawn: {'its' if one else 'their'} "
        "calls do nothing here, and that costs no points (importing it counts as the task's "
        "import rule says, as anywhere)"
    )


def _filled(ctx: Context, results: list[CheckResult]) -> frozenset[str]:
    """The passed values checks that a single repeated value passes too (policy.one_fill)."""
    passed = {r.name for r in results if r.status == PASSED}
    return one_fill_checks(ctx.task, ctx.reference, ctx.use_cache) & passed


# Which checks one repeated value passes depends on the task alone: found once per process
# (prepare() fills it before a batch forks), not once per submission (~0.35 s each).
_one_fill_checks: dict[tuple[str, str], frozenset[str]] = {}


def one_fill_checks(task: Task, reference: ModuleType | None, use_cache: bool) -> frozenset[str]:
    """The values checks whose expected outputs one repeated value matches: read from their
    expected outputs here, on the trusted side (frozen where frozen)."""

    key = (task.folder, task.digest)
    if key in _one_fill_checks:
        return _one_fill_checks[key]
    filled = set()
    for check in task.checks:
        options = check.options
        if (
            check.call is None
            or not kind_of(check).expected_values
            or getattr(options, "compare", None) != "values"
        ):
            continue
        outputs = check_cases(task, reference, check, use_cache).expected
        if one_fill(outputs, options.select):
            filled.add(check.name)
    _one_fill_checks[key] = frozenset(filled)
    return _one_fill_checks[key]


def _graded_here(task: Task) -> list[CheckSpec]:
    """The checks this task runs: all of them, but in a kit not those left to final grading."""
    if not _is_kit(task):
        return list(task.checks)
    later = final_grading.in_a_kit(task.checks)
    return [c for c in task.checks if c.name not in later or later[c.name].runs]


def _is_kit(task: Task) -> bool:

    freeze = frozen.load(task)
    return freeze is not None and freeze.kit


def cases_digest(task: Task) -> str:
    """Which cases a grade was decided on: the freeze's digest, or the versions that
    generated them (a grade then holds for those versions only)."""

    freeze = frozen.load(task)
    return freeze.digest if freeze is not None else f"generated ({_versions()})"


def _in_running_order(checks: Sequence[CheckSpec]) -> list[CheckSpec]:
    """Every visible check first, then the hidden ones (each group in the task's order);
    in each group, imports checks last, so that they weigh what the submission was seen
    doing in every call before them."""
    needed = {name for c in checks for name in c.needs}

    def group(hidden: bool) -> list[CheckSpec]:
        members = [c for c in checks if c.hidden == hidden]
        late = [c for c in members if kind_of(c).reads_source and c.name not in needed]
        return [c for c in members if c not in late] + late

    return group(False) + group(True)


def _environment_problem(task: Task, error: WorkerError) -> str | None:
    """A missing package that the task allows is the grading machine's gap, not a mistake."""
    import importlib.util

    missing = (error.missing_module or "").split(".")[0]
    allowed = {name.split(".")[0] for name in task.allowed_imports}
    if not missing or missing not in allowed:
        return None
    # The worker runs on this machine's Python: what is importable here is there too.
    present = sorted(n for n in allowed - {missing} if importlib.util.find_spec(n) is not None)
    instead = f", or solve the task with {' or '.join(present)}" if present else ""
    return (
        f"this grading environment does not have '{missing}', which your file imports "
        f"and the task allows. That is a problem of the environment, not of your code: "
        f"tell your instructor{instead}."
    )


def _error(outcome: CallOutcome) -> WorkerError:
    """The error of an outcome that is not ok (the sandbox always gives one; the words if not)."""
    return outcome.error or WorkerError("the file could not be run")


def _failure_text(outcome: CallOutcome, doing: str) -> str:

    return {
        RAISED: lambda: f"{doing} {describe_error(_error(outcome))}",
        TIMEOUT: lambda: (
            f"{doing} {_error(outcome).message}: is there an endless loop or a "
            "long computation at the top level?"
        ),
        CRASHED: lambda: f"while {doing}, {_error(outcome).message} (sys.exit, os._exit or a crash?)",
    }.get(outcome.status, lambda: _error(outcome).message)()


def _run_result(task: Task, outcome: CallOutcome) -> CheckResult:
    """The 'runs' line of a script task: ERROR when it did not run at all, FAILED when it
    stopped with an exception part-way (what it printed and left is still checked)."""
    description = "the script runs to its end"
    output = frameworks.shown_output(outcome.stdout + outcome.stderr, task.allowed_imports)
    if outcome.status == OK:
        return CheckResult(RUN_CHECK, PASSED, 0.0, 0.0, description=description)
    environment = _environment_problem(task, _error(outcome)) if outcome.status == RAISED else None
    if environment:
        return CheckResult(
            RUN_CHECK, ERROR, 0.0, 0.0, message=environment, description=description, reason=ENVIRONMENT
        )
    ran_part_way = outcome.status == RAISED and _error(outcome).type != "SyntaxError"

    return CheckResult(
        RUN_CHECK,
        FAILED if ran_part_way else ERROR,
        0.0,
        0.0,
        message=_failure_text(outcome, "running your script"),
        description=description,
        output=output,
        line=error_line(_error(outcome)) if outcome.status == RAISED else None,
        cell=error_cell(_error(outcome)) if outcome.status == RAISED else None,
        reason=call_reason(outcome.status),
    )


def prepare(task: Task, options: Options = Options(), profile_mistakes: bool = True) -> None:
    """Build every check's cases and expected outputs now; they stay in this process's
    memory (and that of processes forked from it) for every submission of the task. The
    known mistakes are imported (a broken mistakes.py stops here, before any student code
    runs) and, with ``profile_mistakes`` (a batch), profiled; one submission profiles only
    what its diagnosis needs, and only when a check failed."""

    reference = load_reference(task)
    problems = []
    for check in task.checks:
        if check.call is not None:
            try:
                cases = case_set(task, reference, check, options.use_cache)
                # the reference's time on each case, which call limits follow: measured
                # once here (a batch's pool processes inherit it), never per student
                reference_seconds(task, reference, check, cases, options.use_cache)
            except (CasesFailed, ReferenceFailed) as exc:
                # Found before any student code runs: the task is broken, not a submission.
                problems.append(f"{task.spec_path}:{check.line}: check '{check.name}': {exc}")
    if problems:
        raise SpecError(problems)
    answer_bytes(task, reference, options.use_cache)
    one_fill_checks(task, reference, options.use_cache)

    mistakes.variants(task)
    if profile_mistakes:
        mistakes.profile(task, reference, options.use_cache)


def _unreadable(task: Task, problem: str) -> CheckResult:
    name = RUN_CHECK if task.kind == "script" else LOAD_CHECK
    return CheckResult(name, ERROR, 0.0, 0.0, message=f"your file was not run: {problem}.", reason=UNREADABLE)


def _load_result(task: Task, outcome: CallOutcome) -> tuple[CheckResult, set[str]]:
    """The 'loads' line of the report, and which required functions the file defines."""
    description = f"the file imports and defines {', '.join(task.functions)}"
    if outcome.status != OK:
        environment = outcome.status == RAISED and _environment_problem(task, _error(outcome))
        why = environment or _failure_text(outcome, "importing your file")
        reason: Reason = ENVIRONMENT if environment else call_reason(outcome.status)

        line = error_line(_error(outcome)) if outcome.status == RAISED else None
        return CheckResult(
            LOAD_CHECK,
            ERROR,
            0.0,
            0.0,
            message=why,
            description=description,
            output=frameworks.shown_output(outcome.stdout + outcome.stderr, task.allowed_imports),
            line=line,
            reason=reason,
            cell=error_cell(_error(outcome)) if line else None,
        ), set()
    assert isinstance(outcome.value, dict)  # (a load answer's value always is: replies.py)
    found = outcome.value.get("functions", {})
    defined = {name for name in task.functions if found.get(name, {}).get("callable") is True}
    notes = []
    for name, params in task.functions.items():
        entry = found.get(name, {})
        if name not in defined:
            notes.append(
                f"{name} is not defined"
                if not entry.get("defined")
                else f"{name} is defined but is not a function"
            )
        elif isinstance(entry.get("params"), list) and entry["params"] != list(params):
            notes.append(
                f"note: {name} takes ({clip(', '.join(map(str, entry['params'])), 600)}); "
                f"the statement asks for ({', '.join(params)})"
            )
    missing = len(defined) < len(task.functions)
    message = "; ".join(notes)
    if missing:
        message += ". Define every function the statement asks for, with exactly that name."
    return CheckResult(
        LOAD_CHECK,
        FAILED if missing else PASSED,
        0.0,
        0.0,
        message=message,
        description=description,
        reason=UNDEFINED if missing else None,
    ), defined


def _run_or_skip(
    ctx: Context, check: CheckSpec, load: CheckResult, defined: set[str], done: list[CheckResult]
) -> CheckResult:

    skipped = None
    if load.status == ERROR and not kind_of(check).reads_source:  # static checks still run
        skipped = f"your file did not {'run' if load.name == RUN_CHECK else 'load'} (see '{load.name}' above)"
    elif check.call is not None and check.call not in defined:
        skipped = f"{check.call} is not defined in your file"
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

    try:
        return with_hint(check, kind_of(check).run(ctx, check))
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


# What one answer may carry, derived from the task: its largest expected output (with the
# inputs a mutation check gets back) times a margin, and never less than a floor; for a
# script, a margin over the arrays its checks look for. Anything larger is refused
# before it is read (wire.answer_caps), and a worker refuses it itself.
ANSWER_FLOOR_BYTES = 16 << 20
SCRIPT_FLOOR_BYTES = 32 << 20
ANSWER_MARGIN, SCRIPT_MARGIN = 4, 16
_answer_bytes: dict[tuple, int] = {}


def _nbytes(value: object, depth: int = 0) -> int:
    import numpy as np

    if depth > 64:
        return 0
    if isinstance(value, (np.ndarray, np.generic)):
        return int(np.asarray(value).nbytes)
    if isinstance(value, (list, tuple)):
        return sum(_nbytes(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return sum(_nbytes(v, depth + 1) for v in value.values())
    return 64 if isinstance(value, (int, float, complex)) else 0


def answer_bytes(task: Task, reference: ModuleType | None, use_cache: bool = True) -> int:
    """The most bytes of arrays one answer of a submission to ``task`` may carry."""
    key = (task.digest, use_cache)
    if key in _answer_bytes:
        return _answer_bytes[key]
    largest = 0
    if task.kind == "script":
        for check in _graded_here(task):
            if kind_of(check).arrays_in_answer:
                with contextlib.suppress(Exception):
                    largest += int(np.asarray(reference_value(task, reference, check), dtype=float).nbytes)
        cap = max(SCRIPT_FLOOR_BYTES, SCRIPT_MARGIN * largest)
    else:
        for check in task.checks:
            if check.call is None:
                continue
            cases = case_set(task, reference, check, use_cache)
            for args, expected in zip(cases.cases, cases.expected):
                largest = max(largest, _nbytes(expected) + _nbytes(args))
        cap = max(ANSWER_FLOOR_BYTES, ANSWER_MARGIN * largest)
    _answer_bytes[key] = cap
    return cap
