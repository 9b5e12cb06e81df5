"""The commands for other platforms: ``grader gradescope`` (an autograder zip), ``grader ci``
(a course repository) and ``grader extras`` (the pip extras the tasks' frameworks need)."""

from __future__ import annotations

import argparse
import dataclasses
import sys

from grader.authoring import load_task, validate
from grader.cli.common import EXIT_CANNOT_RUN, EXIT_FULL, UsageError, options_from
from grader.integrations.course_ci import run_ci
from grader.integrations.gradescope_build import Part, build
from grader.integrations.self_package import NotInstalled, distribution
from grader.integrations.target_pins import DEFAULT_INDEX, DEFAULT_PYTHON, PinsRefused, python_version
from grader.student_text import visible
from grader.submission.file import PREFERRED_STEMS, name_problem
from grader.submission.formats import accepted_text, written_suffixes
from grader.task.frameworks import allowed_frameworks
from grader.task.spec import Task


def cmd_gradescope(args: argparse.Namespace) -> int:
    tasks = [load_task(folder) for folder in args.tasks]
    parts = _parts(tasks, args.file)
    try:
        python = python_version(args.python or DEFAULT_PYTHON)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.samples and len(tasks) > 1:
        raise UsageError(
            "--samples goes with one task; several tasks take their samples from submissions/<id>"
        )
    try:
        distribution()  # before spending time on validation: is there a grader to package?
    except NotInstalled as exc:
        raise UsageError(f"cannot package the grader for Gradescope: {exc}") from None
    # A task that does not validate would fail every student on Gradescope: refuse it here.
    options = options_from(args, warm_workers=True)
    valid = True
    for folder, task in zip(args.tasks, tasks):
        problems = [f for f in validate(task, args.samples, options).findings if not f.ok]
        if problems:
            valid = False
            print(
                f"grader: task {task.id} ({folder}) does not validate; no autograder written "
                f"(run 'grader validate {folder}' for the details):",
                file=sys.stderr,
            )
            for finding in problems:
                print(visible(f"  {finding.subject}: {finding.text}"), file=sys.stderr)
    if not valid:
        return EXIT_CANNOT_RUN
    try:
        notes = build(parts, args.output, python, None if args.offline else args.index_url or DEFAULT_INDEX)
    except PinsRefused as exc:
        raise UsageError(f"no autograder written: {exc}") from None
    except OSError as exc:
        raise UsageError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    for note in notes:
        print(f"grader: note: {note}", file=sys.stderr)
    total = sum(t.max_score for t in tasks)
    what = f"'{tasks[0].title}'" if len(tasks) == 1 else f"one assignment of {len(tasks)} tasks"
    print(f"wrote {args.output}: upload it as the autograder of {what} on Gradescope ({total:g} points)")
    for part in parts:
        if part.file:
            print(f"  task {part.task.id} ({part.task.max_score:g} points) grades the student's {part.file}")
    print(f"students upload: {_uploads(parts)}")
    return EXIT_FULL


def _uploads(parts: list[Part]) -> str:
    """What students must upload, in words to pass on to them (run_autograder's rule)."""
    named = [part.file for part in parts if part.file]
    if named:
        return ", ".join(named) + (
            " (each file exactly so named)" if len(named) > 1 else " (exactly so named)"
        )
    stems = ", ".join(PREFERRED_STEMS[:-1]) + f" or {PREFERRED_STEMS[-1]}"
    return (
        f"one {accepted_text()} file, under any name when it is the upload's only one; "
        f"among several, the one named {stems} (name it with --file NAME to require a name)"
    )


def _parts(tasks: list[Task], files: list[str]) -> list[Part]:
    """Each task with the file of the upload it grades: --file TASK_ID=NAME, else the task id
    with the first format's suffix when there are several (with one, the upload's only hand-in)."""
    ids = [t.id for t in tasks]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise UsageError(f"task {', '.join(twice)} is given twice; give each task once")
    named: dict[str, str] = {}
    for given in files:
        task_id, equals, name = given.partition("=")
        if not equals and len(tasks) == 1:
            task_id, name = tasks[0].id, given
        if not name or task_id not in ids:
            raise UsageError(
                f"--file {given}: give TASK_ID=NAME, TASK_ID one of {', '.join(ids)} (the ids of task.yaml)"
            )
        if task_id in named:
            raise UsageError(f"--file: task {task_id} is given two files ({named[task_id]}, {name})")
        problem = name_problem(name)
        if problem:
            raise UsageError(f"--file {given}: {problem}")
        named[task_id] = name
    several = len(tasks) > 1
    return [Part(t, named.get(t.id, t.id + written_suffixes()[0] if several else None)) for t in tasks]


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
        for framework in allowed_frameworks(load_task(folder).allowed_imports):
            if framework.extra not in wanted:
                wanted.append(framework.extra)
    print(",".join(wanted))
    return EXIT_FULL
