"""``grader freeze``: a task's cases and the reference's outputs generated once, with what
a diagnosis asks of the known mistakes and which checks one repeated value passes, and
written as the task's freeze (cases/freeze_files.py: its format, read and written).

In authoring, above grading: what it computes needs the policy and the known mistakes."""

from __future__ import annotations

import os
from types import ModuleType

from grader.cases import (
    FREEZE_FOLDER,
    CaseSet,
    CasesFailed,
    ReferenceFailed,
    case_set,
    cases_entry,
    file_sha,
    load_freeze,
    reference_value,
    tried_cases,
    value_entry,
    write_freeze,
)
from grader.grading import MistakeRuns, one_fill_checks, variants
from grader.task.case_size import smallest_first
from grader.task.spec import CheckSpec, SpecError, Task


def freeze(
    task: Task,
    reference: ModuleType | None,
    only: list[CheckSpec] | None = None,
    out_folder: str | None = None,
    spec_path: str | None = None,
    kit: bool = False,
) -> str:
    """Generate every check's cases and expected outputs (or ``only`` those checks) and
    write them under ``out_folder`` (default: the task's own folder); returns the digest.
    A ``kit`` copies them from the task's own freeze instead, never generating anew.
    A reference that raises on a case, or cases that cannot be drawn, are the task's bugs:
    a SpecError naming each check's line, as grading says it (prepared.py), and nothing written."""
    target = os.path.join(out_folder or task.folder, FREEZE_FOLDER)
    source = load_freeze(task) if kit else None  # (a kit copies the task's own freeze)
    arrays: dict[str, bytes] = {}
    checks = {}
    frozen_sets: dict[str, CaseSet] = {}
    chosen = list(only if only is not None else task.checks)
    problems = []
    for check in chosen:
        if check.call is not None:
            try:
                cases = _by_size(case_set(task, reference, check, use_disk=False, freeze=source))
            except (CasesFailed, ReferenceFailed) as exc:
                problems.append(f"{task.spec_path}:{check.line}: check '{check.name}': {exc}")
                continue
            frozen_sets[check.name] = cases
            checks[check.name] = cases_entry(cases, arrays)
        elif check.kind.compares_with_reference_value():
            checks[check.name] = value_entry(reference_value(reference, check, source), arrays)
    if problems:
        raise SpecError(problems)
    filled = one_fill_checks(
        [c for c in chosen if c.name in frozen_sets],
        lambda check: tried_cases(check, lambda c: frozen_sets[c.name]).expected,
    )
    data = {"checks": checks, "one_fill": sorted(filled)}
    if not kit and only is None:
        # what a diagnosis asks of each known mistake first: which checks it fails
        runs = MistakeRuns(task, variants(task))
        if runs.variants:
            data["mistakes"] = runs.frozen_profile(
                lambda check: tried_cases(check, lambda c: frozen_sets[c.name])
            )
    reference_sha = None if kit else file_sha(task.reference_path)
    return write_freeze(target, task, data, arrays, file_sha(spec_path or task.spec_path), reference_sha, kit)


def _by_size(cases: CaseSet) -> CaseSet:
    """Generated cases smallest first (case_size.py; literal ones keep their place in
    front), so the file reads small to large. Checks try every set smallest first anyway
    (checks/calls.py); the verdict does not depend on the order."""
    lit = cases.literal_count
    generated = smallest_first(cases.cases[lit:])
    keep = list(range(lit)) + [lit + i for i in generated]
    return CaseSet(
        [cases.cases[i] for i in keep],
        [cases.expected[i] for i in keep],
        lit,
        [cases.recipes_of(i) for i in keep],
    )
