"""The command line's grammar: every command, its arguments and their help."""

from __future__ import annotations

import argparse
import os
import sys
from typing import NoReturn

from grader import __version__
from grader.classroom.export_formats import LMS_FORMATS
from grader.cli.common import EXIT_CANNOT_RUN
from grader.report import RENDERERS
from grader.sandbox import NAMES
from grader.service.limits import ClientLimits
from grader.submission.formats import accepted_text, written_suffixes


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse exits 2 too; keep its usage line, add a hint
        self.print_usage(sys.stderr)
        self.exit(
            EXIT_CANNOT_RUN, f"{self.prog}: error: {message}\nRun '{self.prog} --help' for the options.\n"
        )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="grader", description="Grade numerical Python exercises in a sandbox.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def sandbox_options(p: argparse.ArgumentParser) -> None:
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
        p.add_argument(
            "--no-speedups",
            action="store_true",
            help="grade without the speed-ups (a worker started ahead, shrinks in two lanes, "
            "earlier shrinks walked first): the same reports, slower; for comparison or "
            "diagnosis (or $GRADER_NO_SPEEDUPS=1)",
        )

    check = commands.add_parser("check", help="grade one submission file")
    check.add_argument("task", help="task folder (holds task.yaml)")
    check.add_argument(
        "submission",
        help=f"the student's {accepted_text()} file, a folder holding one, or - to read it from standard input",
    )
    check.add_argument(
        "--file",
        metavar="NAME",
        help="SUBMISSION is a folder (an upload): grade its file NAME, exactly; if it is missing, "
        "the report says so and what the folder holds (Gradescope's run_autograder passes it)",
    )
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
        "submissions", help=f"a folder: one {accepted_text()} per student, or one folder per student"
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
        "export",
        help="grade files from a gradebook: detailed, and for an LMS "
        f"({', '.join(f.label for f in LMS_FORMATS)}) with a roster",
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
        choices=[f.name for f in LMS_FORMATS],
        default=[],
        help="also write "
        + " or ".join(f"{f.pattern} ({f.description})" for f in LMS_FORMATS)
        + "; needs --roster; may be given twice",
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
        help=f"where OUT/<task id>/<student>{'|'.join(written_suffixes())} and OUT/collection.csv go "
        "(new, empty or an earlier collection, which is replaced; default: collected)",
    )
    collect.add_argument(
        "--repo-url",
        default="{repo}",
        metavar="TEMPLATE",
        help="each student's repository: {repo} (the roster's repo column), "
        "{submission_id}, {env:NAME} (a secret from the environment, never "
        "printed), e.g. 'https://x-access-token:{env:TOKEN}@github.com/{repo}.git' "
        "(default: {repo}, a URL, or a path inside --repos-root)",
    )
    collect.add_argument(
        "--repos-root",
        metavar="DIR",
        help="the folder holding the students' repositories, when the roster names them by path: "
        "a path (or file:// URL) is read only inside it, through no link, and git reads a private "
        "copy of it (no alternates, no gitdir file, no linked worktree); without it, local paths "
        "are refused before anything is fetched",
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

    gradescope = commands.add_parser(
        "gradescope",
        help="build a Gradescope autograder zip: one task, or several graded as one assignment",
    )
    gradescope.add_argument(
        "tasks",
        nargs="+",
        metavar="task",
        help="task folder(s) (hold task.yaml), in the order they are shown",
    )
    gradescope.add_argument("--output", "-o", default="autograder.zip", help="the zip to write")
    gradescope.add_argument(
        "--file",
        action="append",
        default=[],
        metavar="TASK_ID=NAME",
        help="the file of the student's upload that task TASK_ID grades, e.g. pe-table-shape=table_shape"
        f"{written_suffixes()[0]} (repeat per task; default: <task id>{written_suffixes()[0]} with several "
        f"tasks, the upload's only {accepted_text()} file with one)",
    )
    gradescope.add_argument(
        "--python",
        metavar="X.Y",
        help="the Python of the Gradescope image (default 3.10: its Ubuntu 22.04 base image's): the "
        "pinned versions are checked against the package index to install there, and a pin that does not "
        "is replaced by the newest version that does, or the zip is refused",
    )
    gradescope.add_argument(
        "--index-url",
        metavar="URL",
        help="the package index to check the pins against (default: PyPI, which Gradescope's image uses)",
    )
    gradescope.add_argument(
        "--offline",
        action="store_true",
        help="pin the versions installed here without asking the package index whether they install on "
        "--python (Gradescope's image build fails if one does not)",
    )
    gradescope.add_argument(
        "--samples",
        help="sample submissions to validate the task with, one task only (default: submissions/<task id> "
        "beside tasks/)",
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
    kit.add_argument(
        "--output",
        "-o",
        required=True,
        help="the folder to write the kits to (with the grader as a wheel and a README for students)",
    )

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

    serve = commands.add_parser(
        "serve", help="a submission service: students upload, read their feedback; staff see the class"
    )
    serve.add_argument("tasks", nargs="+", metavar="task", help="task folder(s) (hold task.yaml)")
    serve.add_argument("--roster", help="the class (the CSV grader export --roster reads): who may sign in")
    serve.add_argument(
        "--db",
        help="the database: sqlite:///PATH or postgresql://USER@HOST/NAME "
        f"(default: sqlite:///{os.path.join('grader-serve', 'service.sqlite')}, a folder of its own)",
    )
    serve.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1, loopback)"
    )
    serve.add_argument("--port", type=int, default=8000, help="port (default: 8000; 0: any free one)")
    serve.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=os.cpu_count() or 1,
        help="uploads graded at once (default: all cores)",
    )
    serve.add_argument("--dask", metavar="tcp://HOST:PORT", help="grade on this Dask cluster")
    serve.add_argument("--attempts", type=int, help="uploads a student may make per task (default: no limit)")
    serve.add_argument(
        "--deadline", help="uploads after this time (ISO 8601 with its UTC offset) are marked late"
    )
    serve.add_argument(
        "--secure-cookies",
        action="store_true",
        help="send the session cookie over HTTPS only (behind a TLS proxy: docs/operators.md)",
    )
    serve.add_argument(
        "--limit",
        action="append",
        metavar="NAME=VALUE",
        help="change one bound on what a client may hold (repeatable; docs/service.md: Limits): "
        + "; ".join(
            f"{name} ({what}, default {getattr(ClientLimits(), name.replace('-', '_'))})"
            for name, what in ClientLimits.names().items()
        ),
    )
    serve.add_argument(
        "--trusted-proxy",
        action="append",
        metavar="ADDRESS",
        help="the address of a reverse proxy in front (repeatable): its connections are not "
        "counted per address (a proxy carries many students')",
    )
    sandbox_options(serve)

    serve_token = commands.add_parser(
        "serve-token", help="print a sign-in token for a student (or, with --staff, a member of staff)"
    )
    serve_token.add_argument(
        "person", help="the student's submission_id (as the roster has it), or staff's name"
    )
    serve_token.add_argument("--db", help="the service's database (default: as grader serve's)")
    serve_token.add_argument("--staff", action="store_true", help="a member of staff: the class pages")
    serve_token.add_argument("--url", help="the service's address, to print a personal sign-in link too")

    validate = commands.add_parser("validate", help="check tasks: spec, reference, samples")
    validate.add_argument("tasks", nargs="+", metavar="task", help="task folder(s) (hold task.yaml)")
    validate.add_argument(
        "--samples",
        help="folder of sample submissions, with one task (default: submissions/<task id> beside tasks/)",
    )
    sandbox_options(validate)
    return parser
