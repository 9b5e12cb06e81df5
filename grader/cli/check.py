"""``grader check``: grade one submission and print or write its report.

This half is light: it reads the options and starts a worker ahead (prestart.py; not with
the speed-ups off, speedups.py), which then starts beside the imports of the other half
(check_grading.py: numpy, the checks, the renderers), instead of after them."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses

from grader.cli.common import UsageError, options_from
from grader.cli.slips import check_slips
from grader.grading import head_start, starts_ahead


def cmd_check(args: argparse.Namespace) -> int:
    slip = check_slips(args.task, args.submission)
    if slip:
        raise UsageError(slip)
    # (one file in this process: its shrinks may take the second core, shrinking/lanes.py)
    # (a student's own check, unless --others-work: a kit may then be graded unsandboxed)
    options = dataclasses.replace(
        options_from(args), others_work=args.others_work, own_machine=not args.others_work, shrink_lanes=True
    )
    ahead = head_start(args.task, options) if starts_ahead(options) else contextlib.nullcontext()
    with ahead as started:
        from grader.cli import check_grading  # (after the worker has started: see above)

        return check_grading.check(args, options, started)
