"""The first line of a report: what loading a function task's file (``loads``) or running a
script task's (``runs``) said, from the sandbox's outcome; and its notes (a display library
not drawn). A file that did not load or run is an ERROR line that says why, in the
student's terms; a missing package the task allows is the machine's gap, said so."""

from __future__ import annotations

import dataclasses
import importlib.util

from grader.grading.checks.calls import describe_error, error_cell, error_line
from grader.records.result import ERROR, FAILED, PASSED, CheckResult
from grader.records.statuses import (
    CRASHED,
    ENVIRONMENT,
    OK,
    RAISED,
    TIMEOUT,
    UNDEFINED,
    UNREADABLE,
    Reason,
    call_reason,
)
from grader.records.worker_error import WorkerError
from grader.sandbox import CallOutcome
from grader.student_text import clip
from grader.submission.notebook import failed_cells_note
from grader.submission.python_file import PythonSource
from grader.submission.source_map import location_text
from grader.task import frameworks
from grader.task.spec import Task

LOAD_CHECK = "loads"  # function tasks: the file imports and defines the functions
RUN_CHECK = "runs"  # script tasks: the script runs to its end


def not_drawn(task: Task, outcome: CallOutcome | None) -> str:
    """The note for a submission that imported a display library this machine does not have:
    its stand-in drew nothing, and that costs nothing (inside/display.py). The names are the
    worker's word, so only the task's own display libraries are named."""
    value = getattr(outcome, "value", None)
    served = value.get("stand_ins", []) if isinstance(value, dict) else []
    names = [name for name in task.display_imports if name in served]
    if not names:
        return ""
    libraries = " and ".join(names)
    one = len(names) == 1
    return (
        f"note: {libraries} {'is' if one else 'are'} not installed where this was graded, so "
        f"what your file draws with {'it' if one else 'them'} was not drawn: {'its' if one else 'their'} "
        "calls do nothing here, and that costs no points (importing it counts as the task's "
        "import rule says, as anywhere)"
    )


def _environment_problem(task: Task, error: WorkerError) -> str | None:
    """A missing package that the task allows is the grading machine's gap, not a mistake."""

    missing = (error.missing_module or "").split(".")[0]
    allowed = {name.split(".")[0] for name in task.allowed_imports}
    if not missing or missing not in allowed:
        return None
    if importlib.util.find_spec(missing) is not None:
        return None  # (it is here: the error's name is the file's claim, raised by its own code)
    # The worker runs on this machine's Python: what is importable here is there too.
    present = sorted(n for n in allowed - {missing} if importlib.util.find_spec(n) is not None)
    instead = f", or solve the task with {' or '.join(present)}" if present else ""
    return (
        f"this grading environment does not have '{missing}', which your file imports "
        f"and the task allows. That is a problem of the environment, not of your code: "
        f"tell your instructor{instead}."
    )


def _error(outcome: CallOutcome) -> WorkerError:
    """The error of an outcome that is not ok (the sandbox always gives one; the words if not)."""
    return outcome.error or WorkerError("the file could not be run")


def _failure_text(outcome: CallOutcome, doing: str) -> str:

    return {
        RAISED: lambda: f"{doing} {describe_error(_error(outcome))}",
        TIMEOUT: lambda: (
            f"{doing} {_error(outcome).message}: is there an endless loop or a "
            "long computation at the top level?"
        ),
        CRASHED: lambda: f"while {doing}, {_error(outcome).message} (sys.exit, os._exit or a crash?)",
    }.get(outcome.status, lambda: _error(outcome).message)()


def run_result(task: Task, outcome: CallOutcome) -> CheckResult:
    """The 'runs' line of a script task: ERROR when it did not run at all, FAILED when it
    stopped with an exception part-way (what it printed and left is still checked)."""
    description = "the script runs to its end"
    output = frameworks.shown_output(outcome.stdout + outcome.stderr, task.allowed_imports)
    if outcome.status == OK:
        return CheckResult(RUN_CHECK, PASSED, 0.0, 0.0, description=description)
    environment = _environment_problem(task, _error(outcome)) if outcome.status == RAISED else None
    if environment:
        return CheckResult(
            RUN_CHECK, ERROR, 0.0, 0.0, message=environment, description=description, reason=ENVIRONMENT
        )
    ran_part_way = outcome.status == RAISED and _error(outcome).type != "SyntaxError"

    return CheckResult(
        RUN_CHECK,
        FAILED if ran_part_way else ERROR,
        0.0,
        0.0,
        message=_failure_text(outcome, "running your script"),
        description=description,
        output=output,
        line=error_line(_error(outcome)) if outcome.status == RAISED else None,
        cell=error_cell(_error(outcome)) if outcome.status == RAISED else None,
        reason=call_reason(outcome.status),
    )


def unreadable(task: Task, problem: str) -> CheckResult:
    name = RUN_CHECK if task.kind == "script" else LOAD_CHECK
    return CheckResult(name, ERROR, 0.0, 0.0, message=f"your file was not run: {problem}.", reason=UNREADABLE)


def _cell_text(error: WorkerError) -> tuple[int | None, str]:
    """A notebook cell that raised, in the student's words: "cell 4 raised NameError: name
    'x' is not defined: print(x)" (the line it raised on, as written; where it is in a
    function, that function's line); and the cell."""
    cell = error.cell
    text = f"cell {cell if cell is not None else '?'} raised {error.type or 'an exception'}"
    if error.message:
        text += f": {error.message}"
    if error.frames:
        last = error.frames[-1]
        if last.cell == cell and last.function == "<module>":
            text += f": {last.code}" + (f" (line {last.line})" if last.line != 1 else "")
        else:
            text += f" ({location_text(last.cell, last.line)} in {last.function}: {last.code})"
    elif error.line is not None and error.cell is not None:
        text += f" (line {error.line})"
    return cell, text


def failed_cells(
    outcome: CallOutcome | None, source: PythonSource
) -> tuple[list[tuple[int | None, str]], int]:
    """A notebook's cells that failed, in its order: those Python could not compile (left
    out, source.uncompiled) and those that raised when run (the worker's load answer); each
    (cell, what it says), and how many more failed than are described."""
    found: list[tuple[int | None, str]] = list(source.uncompiled)
    errors = outcome.cell_errors if outcome is not None and outcome.status == OK else ()
    found += [_cell_text(e) for e in errors]
    found.sort(key=lambda item: item[0] if item[0] is not None else 0)
    more = max(0, (outcome.cells_failed if outcome is not None and outcome.status == OK else 0) - len(errors))
    return found, more


def undefined_because(
    task: Task, defined: set[str], cells: list[tuple[int | None, str]], source: PythonSource
) -> dict[str, str]:
    """For each required function the notebook left undefined while some cell failed, why:
    the failed cell that defines it (where the import scan found its ``def``), else the
    failed cells. A check of that function says so when it is skipped."""
    if not cells:
        return {}
    at = source.scan.defined_at(task.functions)
    because = {}
    for name in task.functions:
        if name in defined:
            continue
        cell = source.source_map.locate(at[name])[0] if name in at else None
        own = [text for number, text in cells if cell is not None and number == cell]
        shown = own or [text for _number, text in cells[:3]]
        because[name] = f"{'; '.join(shown)}{'' if own or len(cells) <= 3 else '; ...'} (see 'loads' above)"
    return because


def load_result(
    task: Task, outcome: CallOutcome, cells: list[tuple[int | None, str]] | None = None, more: int = 0
) -> tuple[CheckResult, set[str]]:
    """The 'loads' line of the report, and which required functions the file defines.
    ``cells``: a notebook's cells that failed (``failed_cells``), each reported, and ``more``
    that failed too; they cost nothing here: a function they left undefined costs its checks."""
    description = f"the file imports and defines {', '.join(task.functions)}"
    lacking = (
        [e for e in outcome.cell_errors if _environment_problem(task, e)] if outcome.status == OK else []
    )
    if lacking:  # a cell that imports an allowed package this machine lacks: its gap, as a file's
        outcome = dataclasses.replace(outcome, status=RAISED, error=lacking[0])
    if outcome.status != OK:
        environment = outcome.status == RAISED and _environment_problem(task, _error(outcome))
        why = environment or _failure_text(outcome, "importing your file")
        reason: Reason = ENVIRONMENT if environment else call_reason(outcome.status)

        line = error_line(_error(outcome)) if outcome.status == RAISED else None
        return CheckResult(
            LOAD_CHECK,
            ERROR,
            0.0,
            0.0,
            message=why,
            description=description,
            output=frameworks.shown_output(outcome.stdout + outcome.stderr, task.allowed_imports),
            line=line,
            reason=reason,
            cell=error_cell(_error(outcome)) if line else None,
        ), set()
    assert isinstance(outcome.value, dict)  # (a load answer's value always is: replies.py)
    found = outcome.value.get("functions", {})
    defined = {name for name in task.functions if found.get(name, {}).get("callable") is True}
    notes = []
    for name, params in task.functions.items():
        entry = found.get(name, {})
        if name not in defined:
            notes.append(
                f"{name} is not defined"
                if not entry.get("defined")
                else f"{name} is defined but is not a function"
            )
        elif isinstance(entry.get("params"), list) and entry["params"] != list(params):
            notes.append(
                f"note: {name} takes ({clip(', '.join(map(str, entry['params'])), 600)}); "
                f"the statement asks for ({', '.join(params)})"
            )
    missing = len(defined) < len(task.functions)
    message = "; ".join(notes)
    if missing:
        message += ". Define every function the statement asks for, with exactly that name."
    if cells or more:
        said = failed_cells_note(tuple(text for _cell, text in cells or ()), more)
        message = f"{said}; {message}" if message else said
    return CheckResult(
        LOAD_CHECK,
        FAILED if missing or cells or more else PASSED,
        0.0,
        0.0,
        message=message,
        description=description,
        reason=UNDEFINED if missing else RAISED if cells or more else None,
    ), defined
