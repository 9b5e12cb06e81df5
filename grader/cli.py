"""The ``grader`` command.

Exit codes of ``grader check``: 0 at full marks, 1 below, 2 when the grader could not run
(bad task spec, missing file, bad arguments); the reason goes to stderr. ``grader batch``
exits 3 when the grader itself failed on some submissions (named on stderr; they are stored
as error rows that the next run grades again). ``grader collect`` exits 0 when every
repository was fetched (whatever each student handed in: the record says), 1 when some could
not be (their rows say why), 2 when it could not run.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys

EXIT_FULL, EXIT_BELOW, EXIT_CANNOT_RUN = 0, 1, 2
EXIT_GRADER_FAILED = 3  # the grader itself failed (batch: some submissions got an error row)


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse exits 2 too; keep its usage line, add a hint
        self.print_usage(sys.stderr)
        self.exit(
            EXIT_CANNOT_RUN, f"{self.prog}: error: {message}\nRun '{self.prog} --help' for the options.\n"
        )


def _parser() -> argparse.ArgumentParser:
    from grader import __version__

    parser = _Parser(prog="grader", description="Grade numerical Python exercises in a sandbox.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    from grader.sandbox import NAMES

    def sandbox_options(p):
        p.add_argument(
            "--isolation",
            choices=["auto", *NAMES],
            default=None,
            help="sandbox tier: auto takes the strongest that works (default: auto, or $GRADER_ISOLATION)",
        )
        p.add_argument(
            "--require-sandbox", action="store_true", help="refuse to grade unless the bubblewrap tier works"
        )
        p.add_argument(
            "--allow-shared-state",
            action="store_true",
            help="grade someone else's work even in a tier whose workers could share "
            "state here (files, IPC objects, processes), said in every report "
            "(default: refused; or $GRADER_ALLOW_SHARED_STATE=1)",
        )
        p.add_argument(
            "--call-seconds",
            type=float,
            help="time limit of every call, in seconds (absolute; with --call-multiple "
            "or --call-floor-seconds: the ceiling of the derived limits)",
        )
        p.add_argument(
            "--call-multiple",
            type=float,
            help="a call's limit is this many times the reference's time on its case",
        )
        p.add_argument("--call-floor-seconds", type=float, help="... and at least this many seconds")
        p.add_argument("--submission-seconds", type=float, help="time budget of one submission")
        p.add_argument("--memory-mib", type=int, help="address-space limit of the worker")
        p.add_argument(
            "--no-cache",
            action="store_true",
            help="regenerate cases instead of reusing them from ~/.cache/grader",
        )

    check = commands.add_parser("check", help="grade one submission file")
    check.add_argument("task", help="task folder (holds task.yaml)")
    check.add_argument(
        "submission",
        help="the student's .py or .ipynb file, a folder holding one, or - to read it from standard input",
    )
    from grader.report import RENDERERS

    check.add_argument("--format", choices=list(RENDERERS), default="text")
    check.add_argument("--output", "-o", help="write the report to this file instead of stdout")
    check.add_argument("--color", choices=["auto", "always", "never"], default="auto")
    check.add_argument(
        "--staff", action="store_true", help="show hidden checks' details (never give this view to students)"
    )
    check.add_argument(
        "--others-work",
        action="store_true",
        help="the file is someone else's work (Gradescope): refuse the rlimits "
        "tier, in which it could read the task and write the results",
    )
    sandbox_options(check)

    batch = commands.add_parser("batch", help="grade a class into a gradebook")
    batch.add_argument("task", help="task folder (holds task.yaml)")
    batch.add_argument(
        "submissions", help="a folder: one .py or .ipynb per student, or one folder per student"
    )
    batch.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=os.cpu_count() or 1,
        help="submissions graded at once (default: all cores)",
    )
    batch.add_argument(
        "--out",
        default="out",
        help="where gradebook.sqlite, grades-<task>.csv, "
        "reports-<task>.jsonl and summary-<task>.md go "
        "(default: out)",
    )
    batch.add_argument("--force", action="store_true", help="regrade unchanged submissions too")
    batch.add_argument("--dask", metavar="tcp://HOST:PORT", help="grade on this Dask cluster")
    batch.add_argument(
        "--trusted-submissions",
        action="store_true",
        help="the files are your own (samples, tests): allow the rlimits tier, "
        "which is otherwise refused for a class",
    )
    batch.add_argument(
        "--no-warm",
        action="store_true",
        help="a fresh sandboxed Python per submission instead of warm workers "
        "(several times slower; for comparison or diagnosis)",
    )
    sandbox_options(batch)

    export = commands.add_parser(
        "export", help="grade files from a gradebook: detailed, and for an LMS (Canvas, Moodle) with a roster"
    )
    export.add_argument("out", nargs="?", default="out", help="the batch's --out folder")
    export.add_argument(
        "--roster",
        help="CSV with the header submission_id,lms_id,name (optional: "
        "sis_user_id, sis_login_id, section): who is who in the LMS",
    )
    export.add_argument(
        "--format",
        dest="formats",
        action="append",
        choices=["canvas", "moodle"],
        default=[],
        help="also write canvas-<task>.csv or moodle-<task>.csv (total "
        "points only; needs --roster); may be given twice",
    )
    export.add_argument("--task", help="only this task (default: every task of the gradebook)")
    export.add_argument(
        "--assignment",
        help="the LMS's name of the assignment column (default: "
        "the task id; Canvas matches 'Name (id)' to an existing one)",
    )
    export.add_argument(
        "--collection",
        metavar="COLLECTION.csv",
        help="the collection.csv of grader collect (needs --roster): every roster "
        "student's row says what was collected, or why nothing was",
    )
    export.add_argument("--excel", action="store_true", help="a UTF-8 BOM, so Excel opens the files as UTF-8")

    collect = commands.add_parser(
        "collect",
        help="final grading: fetch every roster student's repository and collect "
        "each task's hand-in from git, for grader batch (see docs/integrations.md: Final grading)",
    )
    collect.add_argument("tasks", nargs="+", metavar="task", help="task folder(s) (hold task.yaml)")
    collect.add_argument(
        "--roster",
        required=True,
        help="the roster (as grader export reads it) with a repo column, or "
        "ids that --repo-url turns into repositories",
    )
    collect.add_argument(
        "--out",
        default="collected",
        help="where OUT/<task id>/<student>.py|.ipynb and OUT/collection.csv go "
        "(new, empty or an earlier collection, which is replaced; default: collected)",
    )
    collect.add_argument(
        "--repo-url",
        default="{repo}",
        metavar="TEMPLATE",
        help="each student's repository: {repo} (the roster's repo column), "
        "{submission_id}, {env:NAME} (a secret from the environment, never "
        "printed), e.g. 'https://x-access-token:{env:TOKEN}@github.com/{repo}.git' "
        "(default: {repo}, a URL or path)",
    )
    collect.add_argument(
        "--deadline",
        metavar="ISO8601",
        help="grade the last commit before this time, with its UTC offset "
        "(2026-12-01T23:59:00+01:00); default: the tip of the default branch",
    )
    collect.add_argument("--jobs", "-j", type=int, default=4, help="repositories fetched at once (default 4)")
    collect.add_argument(
        "--fetch-seconds",
        type=float,
        default=300.0,
        help="time limit of each git command, in seconds (default 300)",
    )

    gradescope = commands.add_parser("gradescope", help="build a Gradescope autograder zip")
    gradescope.add_argument("task", help="task folder (holds task.yaml)")
    gradescope.add_argument("--output", "-o", default="autograder.zip", help="the zip to write")
    gradescope.add_argument(
        "--samples",
        help="sample submissions to validate the task with (default: submissions/<task id> beside tasks/)",
    )
    sandbox_options(gradescope)

    freeze = commands.add_parser(
        "freeze", help="generate a task's cases and expected outputs once, into TASK/frozen/"
    )
    freeze.add_argument("tasks", nargs="+", metavar="task", help="task folder(s) (hold task.yaml)")

    kit = commands.add_parser(
        "kit",
        help="write what students may have of tasks: statement, "
        "public checks, their frozen cases; no reference",
    )
    kit.add_argument("tasks", nargs="+", metavar="task", help="task folder(s) (hold task.yaml)")
    kit.add_argument("--output", "-o", required=True, help="the folder to write the kits to")

    ci = commands.add_parser(
        "ci", help="grade a course repository (see docs/integrations.md: Course repository CI)"
    )
    ci.add_argument("root", nargs="?", default=".", help="the repository (default: here)")
    ci.add_argument(
        "--min-score", type=float, default=100.0, help="percent of all points needed to pass (default 100)"
    )
    ci.add_argument("--junit", help="write JUnit XML here")
    ci.add_argument(
        "--summary", help="write a Markdown summary here (default: $GITHUB_STEP_SUMMARY when set)"
    )
    sandbox_options(ci)

    extras = commands.add_parser(
        "extras", help="print the grader's extras that the tasks' frameworks need (tensorflow,torch), for pip"
    )
    extras.add_argument("tasks", nargs="+", metavar="task", help="task folder(s) (hold task.yaml)")

    validate = commands.add_parser("validate", help="check tasks: spec, reference, samples")
    validate.add_argument("tasks", nargs="+", metavar="task", help="task folder(s) (hold task.yaml)")
    validate.add_argument(
        "--samples",
        help="folder of sample submissions, with one task (default: submissions/<task id> beside tasks/)",
    )
    sandbox_options(validate)
    return parser


def _options(args, warm_workers: bool = False):
    """Options from the command line. ``warm_workers`` for commands that grade many files in
    one run (batch, validate, ci): workers forked from a warm server where that works."""
    from grader.grading.grade import Options

    isolation = args.isolation or os.environ.get("GRADER_ISOLATION", "auto")
    if args.require_sandbox:
        from grader.sandbox import NAMES

        isolation = NAMES[0]  # the strongest tier
    limits: dict = {
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
            raise _Usage(f"--{name.replace('_', '-')} must be positive")
    if "call_multiple" in limits or "call_floor_seconds" in limits:
        limits["call_limit"] = "derived"
    elif "call_seconds" in limits:
        limits["call_limit"] = "absolute"  # an explicit limit means that limit, for every call
    shared_state = args.allow_shared_state or os.environ.get("GRADER_ALLOW_SHARED_STATE", "") == "1"
    return Options(
        isolation=isolation,
        limits=limits,
        use_cache=not args.no_cache,
        warm_workers=warm_workers,
        shared_state=shared_state,
    )


def _refuse_open_output(options, path: str) -> None:
    """In the unprivileged tier, the folder a report is written to must not be open to
    every user (the worker could plant the file first)."""
    from grader.sandbox import choose_tier, refuse_open_paths, tier

    if tier(
        choose_tier(options.isolation, options.others_work, options.shared_state)
    ).file_permissions_are_walls:
        refuse_open_paths([], [os.path.dirname(os.path.abspath(path))])


class _Usage(Exception):
    pass


def _colour(choice: str) -> bool:
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty()


def _write(text: str, path: str | None) -> None:
    if path is None:
        sys.stdout.write(text)
        return
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def cmd_check(args) -> int:
    from grader.grading.grade import grade
    from grader.grading.redact import for_students
    from grader.grading.task_yaml import load_task
    from grader.report import RENDERERS
    from grader.submission.file import SubmissionError

    task = load_task(args.task)
    options = dataclasses.replace(_options(args), others_work=args.others_work)
    if args.output:
        _refuse_open_output(options, args.output)
    submission = _stdin_submission() if args.submission == "-" else args.submission
    try:
        result = grade(task, submission, options)
    except SubmissionError as exc:
        if args.format == "gradescope" and args.output:  # Gradescope needs a results.json
            from grader.report.gradescope import cannot_grade

            _write(cannot_grade(str(exc)), args.output)
        raise
    if not args.staff:
        result = for_students(result)
    if result.isolation_note:
        print(f"grader: note: {result.isolation_note}", file=sys.stderr)
    colour = _colour(args.color) and args.format == "text" and args.output is None
    _write(RENDERERS[args.format](result, colour=colour), args.output)
    from grader.records.statuses import PASSED

    return EXIT_FULL if result.status == PASSED else EXIT_BELOW


def cmd_batch(args) -> int:
    from grader.classroom.batch import run_batch
    from grader.grading.task_yaml import load_task

    if args.jobs < 1:
        raise _Usage("--jobs must be at least 1")
    task = load_task(args.task)
    options = dataclasses.replace(
        _options(args, warm_workers=not args.no_warm), others_work=not args.trusted_submissions
    )
    outcome = run_batch(task, args.submissions, args.out, args.jobs, args.force, args.dask, options)
    sys.stdout.write(outcome.summary_markdown)
    print(
        f"\nwrote {', '.join(outcome.written)} and {os.path.join(args.out, 'gradebook.sqlite')}"
        f"\n(for an LMS: grader export {args.out} --roster ROSTER.csv --format canvas|moodle)",
        file=sys.stderr,
    )
    if outcome.grader_failed:
        print(
            f"grader: the grader failed on {len(outcome.grader_failed)} submission(s): "
            f"{', '.join(outcome.grader_failed)}. They are stored as errors (0 points) and "
            "graded again by the next run of the batch.",
            file=sys.stderr,
        )
        return EXIT_GRADER_FAILED
    return EXIT_FULL


def cmd_export(args) -> int:
    from grader.classroom.batch import ExportError, export
    from grader.classroom.roster import RosterError, load_roster
    from grader.student_text import line

    if not os.path.isfile(os.path.join(args.out, "gradebook.sqlite")):
        raise _Usage(f"{args.out}: holds no gradebook.sqlite; give the --out folder of a batch")
    if args.formats and not args.roster:
        raise _Usage(
            f"--format {args.formats[0]} needs --roster: an LMS matches students by its "
            "own ids (see docs/integrations.md: Exporting grades to an LMS)"
        )
    if args.collection and not args.roster:
        raise _Usage(
            "--collection needs --roster: the collection says what each roster student "
            "handed in (see docs/integrations.md: Exporting grades to an LMS)"
        )
    roster = None
    if args.roster:
        try:
            roster = load_roster(args.roster)
        except RosterError as exc:
            return _problems("the roster has problems", exc.problems)
    collection = None
    if args.collection:
        from grader.classroom.collection import CollectionError, read

        try:
            collection = read(args.collection)
        except CollectionError as exc:
            return _problems("the collection has problems", exc.problems)
    try:
        done = export(args.out, args.formats, roster, args.task, args.assignment, args.excel, collection)
    except ExportError as exc:
        raise _Usage(str(exc)) from None
    for exported in done:
        # Who the LMS files cannot hold, or hold without a score: said here and in the files.
        matched, task = exported.matched, line(exported.task)
        if matched.unknown:
            print(
                f"{task}: {len(matched.unknown)} submission id(s) not in the roster, so only in "
                f"the detailed grades file (empty lms_id): {line(', '.join(matched.unknown), 4000)}",
                file=sys.stderr,
            )
        if matched.missing:
            names = ", ".join(f"{e.submission_id} ({e.name})" for e in matched.missing)
            print(
                f"{task}: {len(matched.missing)} roster student(s) without a submission, exported "
                f"with an empty score: {line(names, 4000)}",
                file=sys.stderr,
            )
        if matched.not_collected:
            print(
                f"{task}: {len(matched.not_collected)} repositor{'y' if len(matched.not_collected) == 1 else 'ies'} "
                f"could not be fetched, exported with an empty score (the reason is in the "
                f"grades file): {line(', '.join(matched.not_collected), 4000)}",
                file=sys.stderr,
            )
        if matched.ungraded_hand_ins:
            print(
                f"{task}: {len(matched.ungraded_hand_ins)} collected hand-in(s) without a grade of "
                f"that very file (run grader batch on the collection), exported with an empty "
                f"score: {line(', '.join(matched.ungraded_hand_ins), 4000)}",
                file=sys.stderr,
            )
        if matched.not_graded and args.formats:
            print(
                f"{task}: the grader failed on {len(matched.not_graded)} submission(s), exported "
                f"to an LMS with an empty score until a batch grades them: "
                f"{line(', '.join(matched.not_graded), 4000)}",
                file=sys.stderr,
            )
        for path in exported.paths:
            print(f"wrote {path}")
    return EXIT_FULL


def _problems(title: str, problems: list[str]) -> int:
    from grader.student_text import line

    print(f"grader: {title}:", file=sys.stderr)
    for problem in problems:
        print(f"  {line(problem, 2000)}", file=sys.stderr)
    return EXIT_CANNOT_RUN


def cmd_collect(args) -> int:
    from grader.classroom.collect import CollectError, Template, parse_deadline, run_collect
    from grader.classroom.roster import RosterError, load_roster
    from grader.grading.task_yaml import load_task
    from grader.student_text import visible

    if args.jobs < 1:
        raise _Usage("--jobs must be at least 1")
    if args.fetch_seconds <= 0:
        raise _Usage("--fetch-seconds must be positive")
    tasks = [load_task(folder) for folder in args.tasks]
    try:
        roster = load_roster(args.roster)
    except RosterError as exc:
        return _problems("the roster has problems", exc.problems)
    try:
        template = Template.parse(args.repo_url)
        deadline = parse_deadline(args.deadline) if args.deadline else None
        outcome = run_collect(
            tasks, roster, args.roster, args.out, template, deadline, args.jobs, args.fetch_seconds
        )
    except CollectError as exc:
        return _problems("cannot collect", exc.problems)
    width = max(len(r.submission_id) for r in outcome.records)
    for r in outcome.records:
        print(visible(f"{r.submission_id:<{width}}  {r.task}  {r.status}: {r.summary()}"))
    counts = {
        s: sum(r.status == s for r in outcome.records)
        for s in ("collected", "missing", "two-hand-ins", "refused", "unreachable")
    }
    print(
        f"{len(roster.students)} student{'s' if len(roster.students) != 1 else ''}, {len(tasks)} "
        f"task{'s' if len(tasks) != 1 else ''}: " + ", ".join(f"{n} {s}" for s, n in counts.items() if n)
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


def cmd_gradescope(args) -> int:
    from grader.grading.task_yaml import load_task
    from grader.grading.validate import validate
    from grader.integrations.gradescope_build import build
    from grader.integrations.self_package import NotInstalled, distribution

    task = load_task(args.task)
    try:
        distribution()  # before spending time on validation: is there a grader to package?
    except NotInstalled as exc:
        raise _Usage(f"cannot package the grader for Gradescope: {exc}") from None
    # A task that does not validate would fail every student on Gradescope: refuse it here.
    report = validate(task, args.samples, _options(args, warm_workers=True))
    problems = [f for f in report.findings if not f.ok]
    if problems:
        from grader.student_text import visible  # a sample's file name and what it said

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
        raise _Usage(f"cannot write {args.output}: {exc.strerror or exc}") from None
    for note in notes:
        print(f"grader: note: {note}", file=sys.stderr)
    print(f"wrote {args.output}: upload it as the autograder of '{task.title}' on Gradescope")
    return EXIT_FULL


def cmd_freeze(args) -> int:
    from grader.grading.freezing import freeze
    from grader.grading.task_yaml import load_task
    from grader.task.reference import load_reference

    for folder in args.tasks:
        task = load_task(folder)
        reference = load_reference(task)
        if reference is None:
            raise _Usage(f"{folder}: a kit cannot be refrozen; make a new kit from the full task")
        digest = freeze(task, reference)
        print(f"froze {task.id}: {os.path.join(task.folder, 'frozen')} (digest {digest})")
    return EXIT_FULL


def cmd_kit(args) -> int:
    from grader.grading.kit import make_kit
    from grader.grading.task_yaml import load_task

    for folder in args.tasks:
        print(f"wrote {make_kit(load_task(folder), args.output)}")
    return EXIT_FULL


def cmd_ci(args) -> int:
    from grader.integrations.course_ci import run_ci

    return run_ci(args.root, args.min_score, args.junit, args.summary, _options(args, warm_workers=True))


def cmd_extras(args) -> int:
    """One line: the extras of numgrader that install the frameworks the tasks allow, comma-
    separated, for ``pip install "numgrader[$(grader extras tasks/*)]"`` (empty: none)."""
    from grader.grading.task_yaml import load_task
    from grader.task.frameworks import allowed

    wanted: list[str] = []
    for folder in args.tasks:
        for framework in allowed(load_task(folder).allowed_imports):
            if framework.extra not in wanted:
                wanted.append(framework.extra)
    print(",".join(wanted))
    return EXIT_FULL


def cmd_validate(args) -> int:
    from grader.grading.task_yaml import load_task
    from grader.grading.validate import validate

    if args.samples and len(args.tasks) > 1:
        raise _Usage("--samples goes with a single task")
    tasks = [load_task(folder) for folder in args.tasks]  # every spec is checked first
    options = _options(args, warm_workers=True)

    def show(finding):
        from grader.student_text import visible  # a sample's file name and what it said

        print(visible(f"  {'ok ' if finding.ok else 'BAD'}  {finding.subject}: {finding.text}"), flush=True)

    problems = 0
    for task in tasks:
        print(f"task {task.id} (version {task.version}): spec OK")
        report = validate(task, args.samples, options, progress=show)
        bad = sum(not f.ok for f in report.findings)
        problems += bad
        print(f"{len(report.findings) - bad} ok, {bad} problems")
    return EXIT_FULL if problems == 0 else EXIT_BELOW


def main(argv: list[str] | None = None) -> int:
    # The grader's own numpy does no heavy linear algebra: one BLAS thread starts faster.
    # (Set before numpy is first imported; an explicit setting is respected.)
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")
    args = _parser().parse_args(argv)
    from grader.sandbox import SandboxUnavailable
    from grader.submission.file import SubmissionError
    from grader.task.spec import SpecError

    try:
        return {
            "check": cmd_check,
            "validate": cmd_validate,
            "batch": cmd_batch,
            "export": cmd_export,
            "collect": cmd_collect,
            "gradescope": cmd_gradescope,
            "freeze": cmd_freeze,
            "kit": cmd_kit,
            "extras": cmd_extras,
            "ci": cmd_ci,
        }[args.command](args)
    except SpecError as exc:
        print("grader: the task spec has problems:", file=sys.stderr)
        for problem in exc.problems:
            print(f"  {problem}", file=sys.stderr)
        return EXIT_CANNOT_RUN
    except (SubmissionError, SandboxUnavailable, _Usage) as exc:
        from grader.student_text import line

        print(f"grader: {line(exc, 8000)}", file=sys.stderr)  # may name a student's files
        return EXIT_CANNOT_RUN
    except KeyboardInterrupt:
        print("grader: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_CANNOT_RUN
    except OSError as exc:
        if exc.filename is None:
            return _internal_error(exc)
        print(
            f"grader: {exc.filename}: {exc.strerror or exc}. Check the path and its permissions.",
            file=sys.stderr,
        )  # a file the user named (-o, --junit, ...)
        return EXIT_CANNOT_RUN
    except Exception as exc:
        return _internal_error(exc)
    finally:
        _close_warm_workers()


def _internal_error(exc: BaseException) -> int:
    """The grader's own bug: one line, a code of its own (3, never 0/1/2, which are grades
    and the user's mistakes), and the traceback only when asked for."""
    from grader.student_text import line

    if os.environ.get("GRADER_DEBUG"):
        import traceback

        traceback.print_exc()
    print(
        f"grader: internal error ({type(exc).__name__}: {line(exc, 500)}); this is a bug in "
        f"the grader, not in the task or the submission. GRADER_DEBUG=1 shows the traceback.",
        file=sys.stderr,
    )
    return EXIT_GRADER_FAILED


def _stdin_submission():
    """``-``: the submission's bytes from standard input, with the same size cap as a file."""
    from grader.submission.file import MAX_SOURCE_BYTES, SubmissionError, SubmissionFile

    data = sys.stdin.buffer.read(MAX_SOURCE_BYTES + 1)
    if len(data) > MAX_SOURCE_BYTES:
        raise SubmissionError(
            f"standard input: more than {MAX_SOURCE_BYTES >> 20} MiB; a "
            f"submission is a source file, not data."
        )
    return SubmissionFile("<stdin>", data)


def _close_warm_workers() -> None:
    """entry() skips the interpreter's teardown (and so atexit): close warm servers here,
    with their cgroups and folders."""
    sandbox = sys.modules.get("grader.sandbox")  # (not imported: nothing to close)
    if sandbox is not None:
        sandbox.close_warm_workers()


def entry() -> None:
    """Console-script entry: flush, then exit at once. Everything that needs cleaning up
    (the sandbox, its files) is closed inside main(); skipping the interpreter's teardown
    saves ~40 ms a run, which matters when a class is graded one process per file."""
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        code = EXIT_CANNOT_RUN
    os._exit(code)


if __name__ == "__main__":
    entry()
