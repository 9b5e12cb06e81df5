"""Imports check: the submission may import only what the task allows.

The verdict rests on the static scan of the source (submission/import_scan.py: imports,
dynamic imports and code, routes out of an allowed package, introspection, what the
functions under test reach of a display library), done on the trusted side. What the worker
saw the submission import or call while it ran is added as evidence here: it can only cost
points, never earn them (a submission can tamper with what its own process records).

A submission with a route to the worker's harness (``harness_reach``) also gets no credit
from the checks whose evidence is gathered by that harness (mutation checks, see
mutation.py).
"""

from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING, Any

from grader.grading.checks.kind import ANY_TASK, Kind
from grader.records.result import SKIPPED, CheckResult, judged
from grader.records.statuses import IMPORTS
from grader.sandbox.inside.protocol import HELD
from grader.submission.import_scan import DYNAMIC_IMPORTERS, allowed_by, is_display
from grader.task.spec import CheckSpec, Task

if TYPE_CHECKING:
    from grader.grading.context import Context

PROBLEMS_SHOWN = 20  # the message names this many (a file of 500k imports is not a 6 MB message)
# Modules whose import is itself a route to the worker's harness (frames, objects, raw
# memory, code run from strings, tracing): an import of one of these, allowed or not, costs
# the checks whose evidence that harness gathers. Any other import (os, socket, scipy, sys:
# its routes are its attributes, each of which the scan or the worker sees) costs the
# imports check alone; what it is then used for shows in the scan or at run time.
HARNESS_ROUTES = DYNAMIC_IMPORTERS | {
    "builtins",
    "importlib",
    "gc",
    "inspect",
    "signal",
    "threading",
    "_thread",
    "runpy",
    "ctypes",
    "_ctypes",
    "cffi",
    "marshal",
    "pickle",
    "_pickle",
    "copyreg",
    "shelve",
    "traceback",
    "code",
    "codeop",
    "pdb",
    "bdb",
    "trace",
    "numba",
    "llvmlite",
    "pyximport",
    "Cython",
    "cython",
}


def task_allows(task: Task, module: str) -> bool:
    return allowed_by(task.allowed_imports + task.stdlib_imports, module)


# The backend a display library loads in the worker (sandbox/inside/display.py BACKEND): a
# module it hands out, as much the display library's as its own.
DISPLAY_BACKEND = "_grader_headless"


def _is_call(entry: str) -> bool:
    """A runtime entry that records a call (``exec()``, ``open() of /proc/.../mem``), not a
    module imported or an attribute read (sandbox/inside/evidence.py: RuntimeEvidence)."""
    return "()" in entry


def _runtime_problem(entry: str) -> str:
    if _is_call(entry):
        return f"{entry} (called while running)"
    if entry.startswith(".") and entry.endswith("="):
        return f"{entry[:-1]} (replaced while running)"
    if entry.startswith("."):
        return f"{entry} (read while running)"
    return f"{entry} (imported while running)"


def harness_reach(ctx: Context) -> list[str]:
    """What in the submission could reach the worker's harness around it: every hidden
    route of the scan, an import of a module that is itself such a route (sys, gc, inspect,
    ctypes, mmap, ...; allowed or not: any other import costs the imports check alone), and
    what the worker saw it call, read or replace while it ran. Checks whose evidence that
    harness gathers (mutation) give no credit when this is not empty."""
    found = (
        [f"{ctx.source.scan.problem}: nothing is known of what it reaches"]
        if ctx.source.scan.problem
        else list(ctx.source.scan.routes)
    )
    found += [
        f"{module} ({ctx.source.where(line)})"
        for module, line in ctx.source.scan.imports
        if _is_harness_route(module)
    ]
    found += [
        f"{entry[len(HELD) :]} (held by the file once it ran)"
        if entry.startswith(HELD)
        else _runtime_problem(entry)
        for entry in ctx.runtime_imports
        if (
            _is_harness_route(entry[len(HELD) :])
            if entry.startswith(HELD)
            else _is_call(entry) or entry.startswith(".") or _is_harness_route(entry)
        )
    ]
    return found


def _is_harness_route(module: str) -> bool:
    return module.split(".")[0].lstrip(".") in HARNESS_ROUTES or module.endswith("(...)")


def run(ctx: Context, check: CheckSpec[Any]) -> CheckResult:
    start = time.monotonic()
    task = ctx.task
    if ctx.source.text is None:
        return CheckResult(
            check.name,
            SKIPPED,
            0.0,
            check.points,
            hidden=check.hidden,
            message=f"skipped: {ctx.source.problem}",
            description=check.description,
        )
    if ctx.source.scan.problem:
        return CheckResult(
            check.name,
            SKIPPED,
            0.0,
            check.points,
            hidden=check.hidden,
            message=f"skipped: {ctx.source.scan.problem}",
            description=check.description,
        )
    found = ctx.source.scan.imports
    uses = ctx.source.scan.display_uses
    display = task.display_imports if uses is not None else ()  # (unknown: none let through)
    problems = [
        f"{module} ({ctx.source.where(line)})"
        for module, line in found
        if not task_allows(task, module) and not is_display(module, display)
    ]
    problems += ctx.source.scan.routes
    problems += uses or ()  # what the functions under test reach of one
    static_names = {module for module, _ in found}
    static_tops = {module.split(".")[0] for module in static_names}
    for entry in ctx.runtime_imports:
        if entry.startswith(HELD):  # a module its globals hold: imported, or reached
            held = entry[len(HELD) :]
            if not (
                task_allows(task, held)
                or is_display(held, display)
                or (display and held == DISPLAY_BACKEND)
                or held.split(".")[0] in static_tops
            ):
                problems.append(f"{held} (held by the file once it ran: reached through another library)")
            continue
        if (
            _is_call(entry)
            or entry.startswith(".")
            or (not task_allows(task, entry) and entry not in static_names and not is_display(entry, display))
        ):
            problems.append(_runtime_problem(entry))
    allowed_text = ", ".join(task.allowed_imports) or "nothing"
    if task.stdlib_imports:
        allowed_text += f"; from the standard library: {', '.join(task.stdlib_imports)}"
    seconds = time.monotonic() - start
    problems = list(dict.fromkeys(problems))
    shown = ", ".join(problems[:PROBLEMS_SHOWN]) + (
        f", and {len(problems) - PROBLEMS_SHOWN} more" if len(problems) > PROBLEMS_SHOWN else ""
    )
    message = (
        (
            f"imports that this task does not allow: {shown}. "
            f"Allowed: {allowed_text}; no dynamic code (exec, eval, compile, __import__), "
            f"no code run from strings or pickles, and no introspection of other code."
        )
        if problems
        else ""
    )
    return dataclasses.replace(judged(check, not problems, message, IMPORTS), seconds=seconds)


# It takes no fields of its own; it reads the source, so it runs even when the file did not load;
# it judges how, not what: its point counts only for a file that does some of the work.
class Imports(Kind):
    name = "imports"
    families = ANY_TASK

    def run(self, ctx: Context, check: CheckSpec[Any]) -> CheckResult:
        return run(ctx, check)

    def judges_the_file(self) -> bool:
        return True

    def counts_only_with_work(self) -> bool:
        return True


KIND = Imports()
