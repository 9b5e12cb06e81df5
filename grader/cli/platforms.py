"""The commands for other platforms: ``grader gradescope`` (an autograder zip), ``grader ci``
(a course repository) and ``grader extras`` (the pip extras the tasks' frameworks need)."""

from __future__ import annotations

import argparse
import dataclasses
import sys

from grader.cli.common import EXIT_CANNOT_RUN, EXIT_FULL, UsageError, options_from
from grader.grading.task_yaml import load_task
from grader.grading.validate import validate
from grader.integrations.course_ci import run_ci
from grader.integrations.gradescope_build import build
from grader.integrations.self_package import NotInstalled, distribution
from grader.student_text import visible
from grader.task.frameworks import allowed


def cmd_gradescope(args: argparse.Namespace) -> int:
    task = load_task(args.task)
    try:
        distribution()  # before spending time on validation: is there a grader to package?
    except NotInstalled as exc:
        raise UsageError(f"cannot package the grader for Gradescope: {exc}") from None
    # A task that does not validate would fail every student on Gradescope: refuse it here.
    report = validate(task, args.samples, options_from(args, warm_workers=True))
    problems = [f for f in report.findings if not f.ok]
    if problems:
        print(
            f"grader: task {task.id} ({args.task}) does not validate; no autograder written "
            f"(run 'grader validate {args.task}' for the details):",
            file=sys.stderr,
        )
        for finding in problems:
            print(visible(f"  {finding.subject}: {finding.text}"), file=sys.stderr)
        return EXIT_CANNOT_RUN
    try:
        notes = build(task, args.output)
    except OSError as exc:
        raise UsageError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    for note in notes:
        print(f"grader: note: {note}", file=sys.stderr)
    print(f"wrote {args.output}: upload it as the autograder of '{task.title}' on Gradescope")
    return EXIT_FULL


def cmd_ci(args: argparse.Namespace) -> int:
    # A student's own course (kits may be graded unsandboxed); a task with hidden checks is
    # someone else's work all the same (course_ci.grade_course).
    options = dataclasses.replace(options_from(args, warm_workers=True), own_machine=True)
    return run_ci(args.root, args.min_score, args.junit, args.summary, options)


def cmd_extras(args: argparse.Namespace) -> int:
    """One line: the extras of numgrader that install the frameworks the tasks allow, comma-
    separated, for ``pip install "numgrader[$(grader extras tasks/*)]"`` (empty: none)."""
    wanted: list[str] = []
    for folder in args.tasks:
        for framework in allowed(load_task(folder).allowed_imports):
            if framework.extra not in wanted:
                wanted.append(framework.extra)
    print(",".join(wanted))
    return EXIT_FULL
