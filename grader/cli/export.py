"""``grader export``: grade files from a gradebook, and for an LMS with a roster."""

from __future__ import annotations

import argparse
import os
import sys

from grader.classroom.collecting import CollectionError, read_collection
from grader.classroom.export import ExportError, export
from grader.classroom.roster import RosterError, load_roster
from grader.cli.common import EXIT_FULL, UsageError, print_problems
from grader.records.wording import counted
from grader.student_text import line


def cmd_export(args: argparse.Namespace) -> int:
    if not os.path.isfile(os.path.join(args.out, "gradebook.sqlite")):
        raise UsageError(f"{args.out}: holds no gradebook.sqlite; give the --out folder of a batch")
    if args.formats and not args.roster:
        raise UsageError(
            f"--format {args.formats[0]} needs --roster: an LMS matches students by its "
            "own ids (see docs/integrations.md: Exporting grades to an LMS)"
        )
    if args.collection and not args.roster:
        raise UsageError(
            "--collection needs --roster: the collection says what each roster student "
            "handed in (see docs/integrations.md: Exporting grades to an LMS)"
        )
    roster = None
    if args.roster:
        try:
            roster = load_roster(args.roster)
        except RosterError as exc:
            return print_problems("the roster has problems", exc.problems)
    collection = None
    if args.collection:
        try:
            collection = read_collection(args.collection)
        except CollectionError as exc:
            return print_problems("the collection has problems", exc.problems)
    try:
        done = export(args.out, args.formats, roster, args.task, args.assignment, args.excel, collection)
    except ExportError as exc:
        raise UsageError(str(exc)) from None
    for exported in done:
        # Who the LMS files cannot hold, or hold without a score: said here and in the files.
        matched, task = exported.matched, line(exported.task)
        if matched.unknown:
            print(
                f"{task}: {counted(len(matched.unknown), 'submission id')} not in the roster, so only in "
                f"the detailed grades file (empty lms_id): {line(', '.join(matched.unknown), 4000)}",
                file=sys.stderr,
            )
        if matched.missing:
            names = ", ".join(f"{e.submission_id} ({e.name})" for e in matched.missing)
            print(
                f"{task}: {counted(len(matched.missing), 'roster student')} without a submission, exported "
                f"with an empty score: {line(names, 4000)}",
                file=sys.stderr,
            )
        if matched.not_collected:
            print(
                f"{task}: {counted(len(matched.not_collected), 'repository', 'repositories')} "
                f"could not be fetched, exported with an empty score (the reason is in the "
                f"grades file): {line(', '.join(matched.not_collected), 4000)}",
                file=sys.stderr,
            )
        if matched.ungraded_hand_ins:
            print(
                f"{task}: {counted(len(matched.ungraded_hand_ins), 'collected hand-in')} without a grade of "
                f"that very file (run grader batch on the collection), exported with an empty "
                f"score: {line(', '.join(matched.ungraded_hand_ins), 4000)}",
                file=sys.stderr,
            )
        if matched.not_graded and args.formats:
            print(
                f"{task}: the grader failed on {counted(len(matched.not_graded), 'submission')}, exported "
                f"to an LMS with an empty score until a batch grades them: "
                f"{line(', '.join(matched.not_graded), 4000)}",
                file=sys.stderr,
            )
        for path in exported.paths:
            print(f"wrote {path}")
    return EXIT_FULL
