"""``grader freeze``: a task's cases and the reference's outputs generated once and written
as the task's freeze (frozen.py reads it).

Above cases.py (which consults the freeze it writes) so that reading never imports writing.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from types import ModuleType

from grader import __version__
from grader.cases import freeze_files as frozen
from grader.cases.freeze_files import ARRAYS, CASES, FOLDER, FORMAT, MANIFEST, digest_of, file_sha, sha256
from grader.cases.generate import case_set, reference_value, tried_cases
from grader.cases.model import CaseSet, CasesFailed, ReferenceFailed
from grader.disk import swap_folder
from grader.grading import mistakes
from grader.grading.policy import one_fill_checks
from grader.sandbox import wire
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
    target = os.path.join(out_folder or task.folder, FOLDER)
    source = frozen.load(task) if kit else None  # (a kit copies the task's own freeze)
    arrays: dict[str, bytes] = {}
    checks = {}
    frozen_sets: dict[str, CaseSet] = {}
    chosen = list(only if only is not None else task.checks)
    problems = []
    for check in chosen:
        blobs: list[bytes] = []
        if check.call is not None:
            try:
                cases = _by_size(case_set(task, reference, check, use_disk=False, freeze=source))
            except (CasesFailed, ReferenceFailed) as exc:
                problems.append(f"{task.spec_path}:{check.line}: check '{check.name}': {exc}")
                continue
            frozen_sets[check.name] = cases
            entry = {
                "cases": wire.encode(cases.cases, blobs),
                "expected": wire.encode(cases.expected, blobs),
                "literal_count": cases.literal_count,
            }
            if any(cases.recipes):
                entry["recipes"] = cases.recipes
        elif check.kind.compares_with_reference_value():
            value = reference_value(reference, check, source)
            entry = {"value": wire.encode(value, blobs)}
        else:
            continue
        names = []
        for blob in blobs:
            arrays[sha256(blob)] = blob
            names.append(sha256(blob))
        entry["arrays"] = names
        checks[check.name] = entry
    if problems:
        raise SpecError(problems)
    filled = one_fill_checks(
        [c for c in chosen if c.name in frozen_sets],
        lambda check: tried_cases(check, lambda c: frozen_sets[c.name]).expected,
    )
    data = {"format": FORMAT, "task": task.id, "checks": checks, "one_fill": sorted(filled)}
    if not kit and only is None:
        # what a diagnosis asks of each known mistake first: which checks it fails
        runs = mistakes.MistakeRuns(task, mistakes.variants(task))
        if runs.variants:
            data["mistakes"] = runs.frozen_profile(
                lambda check: tried_cases(check, lambda c: frozen_sets[c.name])
            )
    cases_json = json.dumps(data, sort_keys=True, indent=1).encode()
    spec_sha = file_sha(spec_path or task.spec_path)
    reference_sha = None if kit else file_sha(task.reference_path)
    digest = digest_of(spec_sha, reference_sha, sha256(cases_json), sorted(arrays))
    manifest = {
        "format": FORMAT,
        "grader_version": __version__,
        "task": task.id,
        "kit": kit,
        "spec_sha256": spec_sha,
        "reference_sha256": reference_sha,
        "cases_sha256": sha256(cases_json),
        "digest": digest,
    }
    _write_folder(target, cases_json, arrays, manifest)
    return digest


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


def _write_folder(target: str, cases_json: bytes, arrays: dict[str, bytes], manifest: dict) -> None:
    """Write the whole freeze beside the old one, then swap: never half a freeze."""
    parent = os.path.dirname(target)
    os.makedirs(parent, exist_ok=True)
    fresh = tempfile.mkdtemp(prefix=".frozen-", dir=parent)
    try:
        os.makedirs(os.path.join(fresh, ARRAYS))
        for name, blob in arrays.items():
            with open(os.path.join(fresh, ARRAYS, name + ".npy"), "wb") as f:
                f.write(blob)
        with open(os.path.join(fresh, CASES), "wb") as f:
            f.write(cases_json)
        with open(os.path.join(fresh, MANIFEST), "w") as f:
            json.dump(manifest, f, indent=1, sort_keys=True)
            f.write("\n")
        os.chmod(fresh, 0o755)
        swap_folder(fresh, target)
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)
        raise
