"""What the command families share: exit codes, the usage error, sandbox options from the
command line, and writing a report or a list of problems."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

# (not run.py: every command would load numpy and the checks)
from grader.grading import GradeOptions, chosen_speedups, tier_for
from grader.sandbox import NAMES, refuse_open_paths, tier
from grader.student_text import line

if TYPE_CHECKING:  # (an annotation: the task's module is not loaded for every command)
    from grader.task.spec import Task

EXIT_FULL, EXIT_BELOW, EXIT_CANNOT_RUN = 0, 1, 2
EXIT_GRADER_FAILED = 3  # the grader itself failed (batch: some submissions got an error row)


class UsageError(Exception):
    """The user's mistake on the command line: one line on stderr, exit 2."""


def options_from(args: argparse.Namespace, warm_workers: bool = False) -> GradeOptions:
    """GradeOptions from the command line. ``warm_workers`` for commands that grade many files in
    one run (batch, validate, ci): workers forked from a warm server where that works."""
    isolation = args.isolation or os.environ.get("GRADER_ISOLATION", "auto")
    if args.require_sandbox:
        isolation = NAMES[0]  # the strongest tier
    limits: dict[str, Any] = {
        name: value
        for name, value in (
            ("call_seconds", args.call_seconds),
            ("call_multiple", args.call_multiple),
            ("call_floor_seconds", args.call_floor_seconds),
            ("submission_seconds", args.submission_seconds),
            ("memory_mib", args.memory_mib),
        )
        if value is not None
    }
    for name, value in limits.items():
        if value <= 0:
            raise UsageError(f"--{name.replace('_', '-')} must be positive")
    if "call_multiple" in limits or "call_floor_seconds" in limits:
        limits["call_limit"] = "derived"
    elif "call_seconds" in limits:
        limits["call_limit"] = "absolute"  # an explicit limit means that limit, for every call
    shared_state = args.allow_shared_state or os.environ.get("GRADER_ALLOW_SHARED_STATE", "") == "1"
    try:
        on = chosen_speedups(args.no_speedups)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return GradeOptions(
        isolation=isolation,
        limits=limits,
        use_cache=not args.no_cache,
        warm_workers=warm_workers,
        shared_state=shared_state,
        speedups=on,
    )


def refuse_open_output(options: GradeOptions, path: str, task: Task | None = None) -> None:
    """In the unprivileged tier, the folder a report is written to must not be open to
    every user (the worker could plant the file first). ``task``: tier_for's."""
    if tier(tier_for(options, task)).file_permissions_are_walls:
        refuse_open_paths([], [os.path.dirname(os.path.abspath(path))])


def write(text: str, path: str | None) -> None:
    """The text to stdout, or to the file (its folder made) when a path is given."""
    if path is None:
        sys.stdout.write(text)
        return
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def print_problems(title: str, problems: list[str]) -> int:
    print(f"grader: {title}:", file=sys.stderr)
    for problem in problems:
        print(f"  {line(problem, 2000)}", file=sys.stderr)
    return EXIT_CANNOT_RUN
