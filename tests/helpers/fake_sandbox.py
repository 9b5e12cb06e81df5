"""A stand-in for grader.sandbox.Sandbox that starts no worker, and a grading Context built
around it as run.py builds one: for unit tests of a check kind's ``run`` (tests/unit/
test_checks_*.py).

``FakeSandbox`` answers what the checks ask of ``ctx.sandbox`` (``call``, ``calls``,
``stalled``, ``outside_budget``, ``own_budget``, ``limits``, ``evidence``) by running the
"student's" functions here, in this process, on copies of the arguments (as the worker gets
its own): a return is an OK CallOutcome, a raise a RAISED one with the function's frame, the
arguments after the call (``return_inputs``) are the copies as the function left them (what
the grader reads back from shared memory), and a result that is an input, or a view of one,
is ``aliases_input``. A function may instead return a CallOutcome (``timed_out()``,
``crashed()``, ...): that outcome is the answer, as scripted. Timeouts are noted per
function as the real Sandbox notes them, so ``stalled`` answers as it does.

The source a check reads is made by ``student_source`` with the very reading grade()
makes (source_scan.read_in_child and the records made of its answer), here in process
rather than in a bounded child: no subprocess in the unit tier.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import dataclasses
import io
import traceback
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from grader.grading.context import Context, ScriptRun
from grader.grading.prepared import PreparedTask
from grader.grading.shrinking.tree import ShrinkTrees
from grader.records.limits import CallLimit, Limits, absolute_limit
from grader.records.result import CheckResult
from grader.records.statuses import BUDGET, CRASHED, OK, RAISED, TIMEOUT
from grader.records.worker_error import ErrorFrame, WorkerError
from grader.sandbox import CallOutcome  # (the sandbox's face: grader/sandbox/__init__.py)
from grader.submission import source_scan
from grader.submission.file import SubmissionFile
from grader.submission.python_file import PythonSource
from grader.task.spec import Task

__all__ = [
    "FakeSandbox",
    "budget_spent",
    "context",
    "crashed",
    "run_check",
    "script_context",
    "student_source",
    "timed_out",
    "variables",
]


def timed_out(seconds: float = 1.0) -> CallOutcome:
    """What the Sandbox answers for a call it stopped at its limit."""
    return CallOutcome(TIMEOUT, error=WorkerError(f"timed out (limit {seconds:g} s)"))


def crashed() -> CallOutcome:
    return CallOutcome(CRASHED, error=WorkerError("the worker process was killed by signal 9 (SIGKILL)"))


def budget_spent(seconds: float = 60) -> CallOutcome:
    return CallOutcome(BUDGET, error=WorkerError(f"the submission used up its {seconds:g} s time budget"))


class FakeSandbox:
    """Answers a check's calls with Python functions run here (see the module's docstring)."""

    def __init__(
        self,
        functions: dict[str, Callable[..., Any]],
        limits: Limits = Limits(),
        evidence: Sequence[str] = (),
    ):
        self.functions = functions
        self.limits = limits
        self.evidence = list(evidence)  # what workers saw the submission import or call
        self.made: list[tuple[str, list, dict]] = []  # every call, as sent
        self.outside = 0  # how many times calls were made outside the budget (a shrink)
        self.timed_out: dict[str, CallLimit] = {}
        self.finished: set[str] = set()

    # -- what the checks ask
    def stalled(self, function: str) -> CallLimit | None:
        if function in self.finished:
            return None
        return self.timed_out.get(function)

    @contextlib.contextmanager
    def outside_budget(self, fresh_after: float = 1.0) -> Iterator[None]:
        self.outside += 1
        yield

    @contextlib.contextmanager
    def own_budget(self, seconds: float) -> Iterator[None]:
        yield

    def take_evidence(self, entries: Sequence[object]) -> None:
        self.evidence += [e for e in entries if isinstance(e, str) and e not in self.evidence]

    def renew(self) -> None:
        pass

    def call(
        self,
        function: str,
        args: list,
        kwargs: dict | None = None,
        return_inputs: bool = False,
        limit: CallLimit | None = None,
    ) -> CallOutcome:
        return next(
            self.calls(function, [(args, kwargs or {})], return_inputs, None if limit is None else [limit])
        )

    def calls(
        self,
        function: str,
        items: list[tuple[list, dict]],
        return_inputs: bool = False,
        limits: Sequence[CallLimit] | None = None,
    ) -> Iterator[CallOutcome]:
        for i, (args, kwargs) in enumerate(items):
            self.made.append((function, args, kwargs))
            outcome = self._answer(function, args, kwargs, return_inputs)
            if outcome.status in (OK, RAISED):
                self.finished.add(function)
            elif outcome.status == TIMEOUT and function not in self.timed_out:
                self.timed_out[function] = limits[i] if limits is not None else absolute_limit(self.limits)
            yield outcome

    # -- how it answers
    def _answer(self, function: str, args: list, kwargs: dict, return_inputs: bool) -> CallOutcome:
        given = copy.deepcopy(list(args)), copy.deepcopy(dict(kwargs))  # (the worker's own copies)
        printed = io.StringIO()
        student = self.functions[function]
        try:
            with contextlib.redirect_stdout(printed):
                value = student(*given[0], **given[1])
        except Exception as exc:
            outcome = CallOutcome(RAISED, error=_error(exc, student))
        else:
            if isinstance(value, CallOutcome):  # scripted: this is the answer
                return value
            outcome = CallOutcome(OK, value=value, aliases_input=_aliases(value, given))
        outcome.stdout = printed.getvalue()
        if return_inputs:
            outcome.inputs_after = list(given[0]) + list(given[1].values())
        return outcome


def _error(exc: Exception, student: Callable[..., Any]) -> WorkerError:
    """The error as the worker reports it: its type and message, and the student's frames
    only (those of the function's own file)."""
    home = getattr(getattr(student, "__code__", None), "co_filename", None)
    frames = tuple(
        ErrorFrame(frame.lineno, frame.name, (frame.line or "").strip())
        for frame in traceback.extract_tb(exc.__traceback__)
        if frame.filename == home
    )
    return WorkerError(str(exc), type=type(exc).__name__, frames=frames)


def _aliases(value: Any, given: tuple[list, dict]) -> bool:
    arrays = [a for a in [*given[0], *given[1].values()] if isinstance(a, np.ndarray)]
    return isinstance(value, np.ndarray) and any(np.shares_memory(value, a) for a in arrays)


# --------------------------------------------------------------------------- the context


def student_source(text: str, task: Task, name: str = "solution.py") -> PythonSource:
    """The submission's code and scan, as grade() reads them (source_scan.read_source),
    read in this process."""
    submission = SubmissionFile(name, text.encode("utf-8"))
    request = {
        "name": name,
        "data": base64.b64encode(submission.data).decode("ascii"),
        "allowed": list(task.allowed_imports + task.stdlib_imports),
        "numbers": any(c.kind.answer_is_private() for c in task.checks),
        "display": list(task.display_imports),
        "tested": list(task.functions) if task.kind == "functions" else [],
    }
    return source_scan._from_answer(source_scan.read_in_child(request), submission)


def context(
    prepared: PreparedTask,
    functions: dict[str, Callable[..., Any]] | None = None,
    source: str = "",
    evidence: Sequence[str] = (),
) -> Context:
    """The Context grade() builds for one submission of a functions task, around a
    FakeSandbox answering with ``functions``; ``source`` is the file's text (what the
    imports and mutation checks read). Its prepared task has walked no shrink yet (a
    prepared task keeps its submissions' shrinks: a test's shrink is its own)."""
    prepared = dataclasses.replace(prepared, shrink_trees=ShrinkTrees())
    sandbox = FakeSandbox(functions or {}, prepared.task.limits, evidence)
    ctx = Context(prepared, sandbox, student_source(source, prepared.task), [])  # type: ignore[arg-type]  # (a stand-in)
    ctx.runtime_imports = sandbox.evidence  # (run.py: grows while checks run)
    return ctx


def variables(**arrays: Any) -> dict[str, tuple]:
    """A script's global arrays as the worker's answer names them (replies._script_info)."""
    return {
        f"variable '{name}'": (np.asarray(a), "ndarray", "variable", -1, False) for name, a in arrays.items()
    }


def script_context(
    prepared: PreparedTask, stdout: str = "", arrays: dict | None = None, source: str = ""
) -> Context:
    """The Context grade() builds once a script ran: what it printed and the arrays it left
    (``variables``, or entries of (array, type, role, record, addition) named by where)."""
    ctx = context(prepared, source=source)
    ctx.script = ScriptRun(stdout, arrays or {})
    return ctx


def run_check(ctx: Context, name: str) -> CheckResult:
    """The named check judged by its kind (``kind.run``, as run.py asks it)."""
    check = next(c for c in ctx.task.checks if c.name == name)
    return check.kind.run(ctx, check)
