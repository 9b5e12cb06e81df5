"""The task writer's commands: ``grader freeze``, ``grader kit`` and ``grader validate``."""

from __future__ import annotations

import argparse
import os
import sys

from grader.authoring import Finding, display_note, freeze, load_task, make_kit, validate
from grader.cli.common import EXIT_BELOW, EXIT_FULL, UsageError, options_from
from grader.integrations.self_package import NotInstalled
from grader.integrations.student_install import write_installer
from grader.records.wording import counted
from grader.student_text import visible
from grader.task.reference import load_reference


def cmd_freeze(args: argparse.Namespace) -> int:
    for folder in args.tasks:
        task = load_task(folder)
        reference = load_reference(task)
        if reference is None:
            raise UsageError(f"{folder}: a kit cannot be refrozen; make a new kit from the full task")
        digest = freeze(task, reference)
        print(f"froze {task.id}: {os.path.join(task.folder, 'frozen')} (digest {digest})")
    return EXIT_FULL


def cmd_kit(args: argparse.Namespace) -> int:
    ids = []
    for folder in args.tasks:
        task = load_task(folder)
        print(f"wrote {make_kit(task, args.output)}")
        ids.append(task.id)
    # Beside the kits, the grader students install them with (integrations/student_install.py).
    try:
        for path in write_installer(args.output, ids):
            print(f"wrote {path}")
    except NotInstalled as exc:
        print(
            f"grader: note: the kits were written, but not the grader's wheel for students: {exc}",
            file=sys.stderr,
        )
    return EXIT_FULL


def cmd_validate(args: argparse.Namespace) -> int:
    if args.samples and len(args.tasks) > 1:
        raise UsageError("--samples goes with a single task")
    tasks = [load_task(folder) for folder in args.tasks]  # every spec is checked first
    options = options_from(args, warm_workers=True)

    def show(finding: Finding) -> None:
        label = "BAD" if not finding.ok else "ok " if finding.checked else "not checked"
        print(visible(f"  {label}  {finding.subject}: {finding.text}"), flush=True)

    problems = 0
    for task in tasks:
        print(f"task {task.id} (version {task.version}): spec OK")
        print(f"  display libraries: {display_note(task)}")  # (what the task treats so: no finding)
        report = validate(task, args.samples, options, progress=show)
        bad = sum(not f.ok for f in report.findings)
        unchecked = sum(f.ok and not f.checked for f in report.findings)
        problems += bad
        print(
            f"{len(report.findings) - bad - unchecked} ok, "
            + (f"{unchecked} not checked on this machine, " if unchecked else "")
            + counted(bad, "problem")
        )
    return EXIT_FULL if problems == 0 else EXIT_BELOW
