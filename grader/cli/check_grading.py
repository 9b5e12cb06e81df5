"""``grader check``'s grading half (check.py starts a worker ahead, then imports this): load
the task, grade the file, and print or write its report."""

from __future__ import annotations

import argparse
import os
import sys

from grader.authoring import load_task
from grader.cli import slips
from grader.cli.common import EXIT_BELOW, EXIT_FULL, UsageError, refuse_open_output, write
from grader.grading import GradeOptions, HeadStart, for_students, grade
from grader.records.statuses import PASSED
from grader.report import RENDERERS
from grader.report.gradescope import cannot_grade
from grader.submission.file import MAX_SOURCE_BYTES, SubmissionError, SubmissionFile, name_problem, read_named
from grader.task.spec import SpecError


def check(args: argparse.Namespace, options: GradeOptions, started: HeadStart | None) -> int:
    try:
        task = load_task(args.task)
    except SpecError as exc:
        raise slips.spec_problems_for_students(exc) from None
    if args.output:
        refuse_open_output(options, args.output, task)
    if args.file:
        problem = name_problem(args.file) or (
            "a file of a folder, not of stdin" if args.submission == "-" else None
        )
        if problem:
            raise UsageError(f"--file: {problem}")
    submission: str | SubmissionFile = _stdin_submission() if args.submission == "-" else args.submission
    try:
        if args.file:
            submission = read_named(args.submission, args.file)
        result = grade(task, submission, options, started=started)
    except SubmissionError as exc:
        if args.format == "gradescope" and args.output:  # Gradescope needs a results.json
            write(cannot_grade(str(exc), task.id, task.max_score), args.output)
        raise
    if not args.staff:
        result = for_students(result)
    if result.isolation_note:
        print(f"grader: note: {result.isolation_note}", file=sys.stderr)
    colour = _colour(args.color) and args.format == "text" and args.output is None
    shown = RENDERERS[args.format](result, colour=colour, hidden_visibility=task.hidden_visibility)
    write(shown, args.output)
    return EXIT_FULL if result.status == PASSED else EXIT_BELOW


def _colour(choice: str) -> bool:
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty()


def _stdin_submission() -> SubmissionFile:
    """``-``: the submission's bytes from standard input, with the same size cap as a file."""
    data = sys.stdin.buffer.read(MAX_SOURCE_BYTES + 1)
    if len(data) > MAX_SOURCE_BYTES:
        raise SubmissionError(
            f"standard input: more than {MAX_SOURCE_BYTES >> 20} MiB; a "
            f"submission is a source file, not data."
        )
    return SubmissionFile("<stdin>", data)
