"""``grader collect``: fetch every roster student's repository and collect each task's hand-in."""

from __future__ import annotations

import argparse
import sys

from grader.authoring import load_task
from grader.classroom.collecting import CollectError, Template, parse_deadline, run_collect
from grader.classroom.roster import RosterError, load_roster
from grader.cli.common import EXIT_BELOW, EXIT_FULL, UsageError, print_problems
from grader.records.wording import counted
from grader.student_text import visible


def cmd_collect(args: argparse.Namespace) -> int:
    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.fetch_seconds <= 0:
        raise UsageError("--fetch-seconds must be positive")
    tasks = [load_task(folder) for folder in args.tasks]
    try:
        roster = load_roster(args.roster)
    except RosterError as exc:
        return print_problems("the roster has problems", exc.problems)
    try:
        template = Template.parse(args.repo_url)
        deadline = parse_deadline(args.deadline) if args.deadline else None
        outcome = run_collect(
            tasks,
            roster,
            args.roster,
            args.out,
            template,
            deadline,
            args.jobs,
            args.fetch_seconds,
            repos_root=args.repos_root,
        )
    except CollectError as exc:
        return print_problems("cannot collect", exc.problems)
    width = max(len(r.submission_id) for r in outcome.records)
    for r in outcome.records:
        print(visible(f"{r.submission_id:<{width}}  {r.task}  {r.status}: {r.summary()}"))
    counts = {
        s: sum(r.status == s for r in outcome.records)
        for s in ("collected", "missing", "two-hand-ins", "refused", "unreachable")
    }
    print(
        f"{counted(len(roster.students), 'student')}, {counted(len(tasks), 'task')}: "
        + ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    )
    print(
        f"wrote {outcome.written} and {args.out}/<task id>/ (next: grader batch TASK "
        f"{args.out}/<task id> --out grades, then grader export grades --roster {args.roster} "
        f"--collection {outcome.written})",
        file=sys.stderr,
    )
    if outcome.unreachable:
        print(
            f"grader: {len(outcome.unreachable)} repositor{'y' if len(outcome.unreachable) == 1 else 'ies'} "
            f"could not be fetched (their rows say why; their grades stay empty until a "
            f"collection fetches them): {visible(', '.join(outcome.unreachable))}",
            file=sys.stderr,
        )
        return EXIT_BELOW
    return EXIT_FULL
