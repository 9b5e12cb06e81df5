"""``grader batch``: grade a class into a gradebook."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys

from grader.authoring import load_task
from grader.classroom.batch import run_batch
from grader.classroom.export_formats import LMS_FORMATS
from grader.cli.common import EXIT_FULL, EXIT_GRADER_FAILED, UsageError, options_from
from grader.records.wording import counted


def cmd_batch(args: argparse.Namespace) -> int:
    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    task = load_task(args.task)
    options = dataclasses.replace(
        options_from(args, warm_workers=not args.no_warm), others_work=not args.trusted_submissions
    )
    outcome = run_batch(task, args.submissions, args.out, args.jobs, args.force, args.dask, options)
    sys.stdout.write(outcome.summary_text)  # (the .md file keeps the Markdown)
    print(
        f"\nwrote {', '.join(outcome.written)} and {os.path.join(args.out, 'gradebook.sqlite')}"
        f"\n(for an LMS: grader export {args.out} --roster ROSTER.csv --format "
        f"{'|'.join(f.name for f in LMS_FORMATS)})",
        file=sys.stderr,
    )
    if outcome.grader_failed:
        print(
            f"grader: the grader failed on {counted(len(outcome.grader_failed), 'submission')}: "
            f"{', '.join(outcome.grader_failed)}. They are stored as errors (0 points) and "
            "graded again by the next run of the batch.",
            file=sys.stderr,
        )
        return EXIT_GRADER_FAILED
    return EXIT_FULL
