"""``grader validate``: a task checks out when its spec loads, its reference answers every
case and gets full marks on its own checks, its literal examples agree with the reference,
and every sample submission gets the verdict it declares."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from grader.cases import CasesFailed, ReferenceFailed, expected_output, load_freeze
from grader.grading import LOAD_CHECK, RUN_CHECK, GradeOptions, PreparedTask, check_values, grade
from grader.records.result import PASSED, Result
from grader.records.statuses import ENVIRONMENT
from grader.records.wording import counted
from grader.task.frameworks import BY_MODULE
from grader.task.samples import diagnosis_mismatch, mismatch, read_diagnosis, read_expectation, sample_files
from grader.task.spec import DEFAULT_DISPLAY, SpecError, Task
from grader.task.strategies import literal_case


@dataclass
class Finding:
    subject: str
    ok: bool  # no problem of the task's (a finding not checked is none)
    text: str
    checked: bool = True  # False: it could not be checked on this machine (the text says why)


@dataclass
class Validation:
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(f.ok for f in self.findings)


def default_samples_folder(task: Task) -> str:
    return os.path.join(os.path.dirname(os.path.dirname(task.folder)), "submissions", task.id)


def validate(
    task: Task,
    samples_folder: str | None,
    options: GradeOptions,
    progress: Callable[[Finding], None] | None = None,
) -> Validation:
    report = Validation()

    def add(finding: Finding) -> None:
        report.findings.append(finding)
        if progress:
            progress(finding)

    try:
        freeze = load_freeze(task)
    except SpecError as exc:
        add(Finding("frozen cases", False, " ".join(exc.problems)))
        return report
    add(
        Finding(
            "frozen cases",
            freeze is not None,
            f"current (digest {freeze.digest})"
            if freeze
            else f"not frozen: grades depend on the installed Hypothesis; run: grader freeze {task.folder}",
        )
    )
    prepared = PreparedTask.of(task, options.use_cache, freeze)
    reference = prepared.reference
    for check in task.checks:
        if check.call is None:  # (only a check that calls a function has cases)
            continue
        try:
            case_set = prepared.case_set(check)
        except (ReferenceFailed, CasesFailed) as exc:
            add(Finding(check.name, False, str(exc)))
            continue
        given = check.kind.given_case(check.options)  # (an example's literal expect:)
        if given is not None and reference is not None:  # (a kit has none to compare with)
            computed = expected_output(task, reference, check, literal_case(given[0]))
            verdict = check_values(computed, given[1], check.options.tolerance)
            if not verdict.ok:
                add(
                    Finding(
                        check.name,
                        False,
                        f"the literal expect: disagrees with the reference: {verdict.message}",
                    )
                )
                continue
        add(Finding(check.name, True, counted(len(case_set.cases), "case")))
    if any(not f.ok for f in report.findings):
        return report  # nothing can be graded on cases that cannot be made
    prepared.mistakes  # noqa: B018 (a broken mistakes.py stops here, before any file runs)
    if reference is None:
        add(Finding("reference", True, "a student kit: no reference (its cases are frozen)"))
    else:
        own = grade(task, task.reference_path, options, prepared)
        add(
            Finding(
                "reference",
                own.status == PASSED,
                f"reference scores {own.score:g}/{own.max_score:g} on its own checks"
                + (
                    ""
                    if own.status == PASSED
                    else ": " + "; ".join(f"{c.name}: {c.message}" for c in own.checks if c.status != PASSED)
                ),
            )
        )
    folder = samples_folder or default_samples_folder(task)
    samples = sample_files(folder)
    if not samples:
        add(Finding("samples", True, f"no sample submissions in {folder}"))
    names = {c.name for c in task.checks} | {LOAD_CHECK, RUN_CHECK}
    mistake_names = {m.name for m in task.mistakes}
    diagnosed: dict[str, list[str]] = {name: [] for name in mistake_names}
    for path in samples:
        subject = os.path.relpath(path)
        try:
            expectation = read_expectation(path)
        except ValueError as exc:
            add(Finding(subject, False, str(exc)))
            continue
        if expectation is None:
            add(
                Finding(
                    subject,
                    False,
                    "declares no verdict: add a line such as "
                    "'# expect: full marks' or '# expect: fails CHECK'",
                )
            )
            continue
        result = grade(task, path, options, prepared)
        missing = _missing_environment(result)
        if missing:
            # A sample written with a framework this machine lacks cannot be checked here; that
            # is the machine's gap, not the task's (the report says what to install).
            add(Finding(subject, True, f"not checked here: {missing}", checked=False))
            continue
        problem = mismatch(expectation, result, names)
        if problem is None and reference is not None:  # (a kit has no mistakes)
            problem = diagnosis_mismatch(read_diagnosis(path), result, mistake_names)
        for d in result.diagnoses:
            diagnosed.setdefault(d.mistake, []).append(os.path.basename(path))
        summary = f"{result.status} {result.score:g}/{result.max_score:g}"
        if result.diagnoses:
            summary += f", diagnosed: {', '.join(d.mistake for d in result.diagnoses)}"
        add(Finding(subject, problem is None, problem or f"as declared ({summary})"))
    if reference is not None:
        for finding in _mistake_findings(prepared, diagnosed):
            add(finding)
    return report


def display_note(task: Task) -> str:
    """Which libraries the task treats as display-only (imports: display), and what that means."""
    if not task.display_imports:
        return "none (imports: display: []): every library is judged by allowed: alone"
    default = " (the default)" if tuple(task.display_imports) == DEFAULT_DISPLAY else ""
    tested = "; the functions under test may not use one" if task.kind == "functions" else ""
    return (
        f"{', '.join(task.display_imports)}{default}: importing one and drawing with it costs "
        f"no imports check{tested}"
    )


def _missing_environment(result: Result) -> str | None:
    """Why a sample could not run on this machine (a package its task allows is not installed:
    the first line's reason is ENVIRONMENT), in words with the fix; None when it ran."""

    first = result.checks[0] if result.checks else None
    if first is None or first.name not in (LOAD_CHECK, RUN_CHECK) or first.reason != ENVIRONMENT:
        return None
    import re

    found = re.search(r"does not have '([^']+)'", first.message)
    name = found.group(1) if found else "a package"
    fix = f"pip install 'numgrader[{BY_MODULE[name].extra}]'" if name in BY_MODULE else f"pip install {name}"
    return f"it needs {name}, which the task allows and this machine has not installed ({fix})"


def _mistake_findings(prepared: PreparedTask, diagnosed: dict[str, list[str]]) -> list[Finding]:
    """Each declared mistake is really wrong (fails a check) and is diagnosed on a sample."""

    findings = []
    profiled = prepared.profile()
    slow = {
        v.spec.name: prepared.mistakes.too_slow(v) for v in prepared.mistakes.variants
    }  # (known once profiled)
    for name, failing in profiled.items():
        subject = f"mistake {name}"
        if slow[name]:
            findings.append(
                Finding(
                    subject,
                    False,
                    f"{slow[name]}: it is never used. Make it as "
                    "quick as the reference (it runs on every case of the checks).",
                )
            )
        elif not failing:
            findings.append(
                Finding(
                    subject,
                    False,
                    "fails no visible example or property check: "
                    "it is not a mistake the checks can see. Fix its function in "
                    "mistakes.py, or remove it.",
                )
            )
        elif not diagnosed.get(name):
            findings.append(
                Finding(
                    subject,
                    False,
                    f"fails {counted(len(failing), 'check')} but is diagnosed "
                    "on no sample: add a sample that makes it, with "
                    f"'# diagnosis: {name}' near the top",
                )
            )
        else:
            findings.append(
                Finding(
                    subject,
                    True,
                    f"fails {counted(len(failing), 'check')}; diagnosed on {', '.join(diagnosed[name])}",
                )
            )
    return findings
