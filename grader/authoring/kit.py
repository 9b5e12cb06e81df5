"""Student kits: what students may hold of a task, and nothing else.

``grader kit TASK -o DIR`` writes ``DIR/<task id>/``: the statement, a ``task.yaml``
without the hidden checks (absent, not redacted: no name, input or value of one) and
without the reference (nor its known mistakes), and a freeze of the public checks' cases and expected outputs,
taken from the task's own freeze so the kit grades exactly as the full task does. A kit
has no reference: a failure shows the smallest failing frozen case (checks try them
smallest first, case_size.py), and the report says hidden checks may be added at final
grading.

A check whose kind keeps its expected values private (a "did the work" check: the leaves
kinds, whose expected value is the table itself) stays in the kit's task.yaml, so that its
name and points are known, but nothing of what it compares with is frozen into the kit: it
is checked at final grading (final_grading.py), as the kit's task.yaml header and every
report of a kit grade say. A statement or task.yaml that would hand such a value out (the
table's numbers written in it) is refused, naming the file and line.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable

import yaml

from grader.authoring.freezing import freeze as freeze_cases
from grader.cases import load_freeze, reference_value
from grader.disk import swap_folder
from grader.grading import Numbers, header_lines, in_a_kit, typed_in
from grader.submission.source_numbers import scan_numbers
from grader.task.reference import load_reference
from grader.task.spec import CheckSpec, SpecError, Task

HEADER = (
    "# Student kit of task {id} (version {version}), made by `grader kit`: the public\n"
    "# checks only. Hidden checks may be added at final grading.\n"
)


def make_kit(task: Task, out_dir: str) -> str:
    """Write the kit of ``task`` under ``out_dir``; returns its folder."""
    if load_freeze(task) is None:
        raise SpecError(
            [
                f"{task.folder}: not frozen; a kit is cut from the task's frozen cases, "
                f"so that it grades exactly as the task does. Run: grader freeze {task.folder}"
            ]
        )
    if os.path.isfile(task.reference_path) is False:
        raise SpecError([f"{task.folder}: has no reference; a kit is made from the full task"])
    with open(task.spec_path, encoding="utf-8") as f:
        spec = yaml.safe_load(f)
    spec["checks"] = [c for c in spec["checks"] if not c.get("hidden", False)]
    spec.pop("reference", None)
    spec.pop("mistakes", None)  # mistakes.py is near-reference code: a kit has neither
    statement = os.path.basename(task.statement_path)
    spec["statement"] = statement
    public = [c for c in task.checks if not c.hidden]
    later = in_a_kit(public)
    frozen_here = [c for c in public if c.name not in later or later[c.name].runs]
    header = HEADER.format(id=task.id, version=task.version) + "".join(
        line + "\n" for line in header_lines(later)
    )
    body = yaml.safe_dump(spec, sort_keys=False, allow_unicode=True)
    _refuse_leaks(
        task,
        public,
        {task.statement_path: _read(task.statement_path), f"{task.id}/task.yaml (of the kit)": header + body},
    )
    folder = os.path.join(out_dir, task.id)
    staging = folder + ".partial"
    shutil.rmtree(staging, ignore_errors=True)
    os.makedirs(staging)
    try:
        shutil.copyfile(task.statement_path, os.path.join(staging, statement))
        spec_path = os.path.join(staging, "task.yaml")
        with open(spec_path, "w", encoding="utf-8") as f:
            f.write(header + body)
        freeze_cases(
            task, load_reference(task), only=frozen_here, out_folder=staging, spec_path=spec_path, kit=True
        )
        swap_folder(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return folder


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def _refuse_leaks(task: Task, checks: Iterable[CheckSpec], texts: dict[str, str]) -> None:
    """A file of the kit must not hold the expected value of a check whose kind keeps it
    private (the table's numbers, written or encoded): read as a hostile source would be."""

    numbers = {name: Numbers(scan_numbers(text)) for name, text in texts.items()}
    problems = []
    reference, freeze = None, load_freeze(task)
    for check in checks:
        if not check.kind.answer_is_private():
            continue
        reference = reference or load_reference(task)
        value = reference_value(reference, check, freeze)
        for name, found in numbers.items():
            leak = typed_in(value, found, check.options.tolerance)
            if leak is not None:
                where = f"{name}:{leak.line}" if leak.line else name
                problems.append(
                    f"{where}: holds {leak.found} of the {leak.of} telling values that "
                    f"check '{check.name}' compares with (a kit must not hand them out); "
                    "remove them from the statement or the check's description"
                )
    if problems:
        raise SpecError(problems)
