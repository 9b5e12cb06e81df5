"""Run one command: parse, hand the arguments to the command's family, and turn what went
wrong into one line on stderr and an exit code."""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from collections.abc import Callable

from grader.cli.common import EXIT_CANNOT_RUN, EXIT_GRADER_FAILED, UsageError
from grader.cli.parser import build_parser
from grader.sandbox import SandboxUnavailable
from grader.student_text import line
from grader.submission.file import SubmissionError
from grader.task.spec import SpecError

# Which module of grader.cli holds each command (as ``cmd_<command>``). Imported when its
# command runs, never before: these are the allowed function-level imports of cli/, so that
# `grader check` does not load the batch, export or Gradescope code.
FAMILY = {
    "check": "check",
    "batch": "batch",
    "export": "export",
    "collect": "collect",
    "freeze": "tasks",
    "kit": "tasks",
    "validate": "tasks",
    "gradescope": "platforms",
    "ci": "platforms",
    "extras": "platforms",
    "serve": "serve",
    "serve-token": "serve",
}


# The packages of an extra a command needs (numgrader[serve], ...), by their import names.
EXTRAS = {
    "serve": {"starlette", "uvicorn", "sqlalchemy", "alembic", "multipart", "python_multipart"},
}


def command(name: str) -> Callable[..., int]:
    try:
        module = importlib.import_module(f"grader.cli.{FAMILY[name]}")
    except ModuleNotFoundError as exc:
        extra = next((e for e, names in EXTRAS.items() if (exc.name or "").split(".")[0] in names), None)
        if extra is None:
            raise
        raise UsageError(
            f"grader {name} needs the {extra} extra (it lacks {exc.name}): pip install 'numgrader[{extra}]'"
        ) from None
    run: Callable[..., int] = getattr(module, f"cmd_{name.replace('-', '_')}")
    return run


def dispatch(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return command(args.command)(args)
    except SpecError as exc:
        print("grader: the task spec has problems:", file=sys.stderr)
        for problem in exc.problems:
            print(f"  {problem}", file=sys.stderr)
        return EXIT_CANNOT_RUN
    except (SubmissionError, SandboxUnavailable, UsageError) as exc:
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
    if os.environ.get("GRADER_DEBUG"):
        traceback.print_exc()
    print(
        f"grader: internal error ({type(exc).__name__}: {line(exc, 500)}); this is a bug in "
        f"the grader, not in the task or the submission. GRADER_DEBUG=1 shows the traceback.",
        file=sys.stderr,
    )
    return EXIT_GRADER_FAILED


def _close_warm_workers() -> None:
    """entry() skips the interpreter's teardown (and so atexit): close warm servers here,
    with their cgroups and folders."""
    sandbox = sys.modules.get("grader.sandbox")  # (not imported: nothing to close)
    if sandbox is not None:
        sandbox.close_warm_workers()
