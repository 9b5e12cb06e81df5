"""What a check may use while it grades one submission: the prepared task (its cases,
the reference, the call limits' times), the submission's sandbox and source, and what the
earlier checks left for the later ones. Built by run.py, one per submission."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from grader.cases import CaseSet, derived_limit
from grader.grading.checks.typed_in import Numbers
from grader.grading.prepared import PreparedTask
from grader.records.limits import CallLimit
from grader.sandbox import Sandbox
from grader.submission.python_file import PythonSource
from grader.submission.source_numbers import SourceNumbers
from grader.task.case_size import nbytes
from grader.task.spec import CheckSpec, Task

ANSWER_KEPT_BYTES = 1 << 20  # of one output kept for the diagnosis (a larger one is asked again)


@dataclass(frozen=True)
class Answered:
    """What one call of a visible values check gave: its output, or that it raised."""

    value: Any = None
    raised: bool = False


@dataclass
class ScriptRun:
    """What a script task's submission produced: its output and the arrays it computed."""

    stdout: str = ""
    arrays: dict = field(default_factory=dict)  # what it is -> (ndarray, type name, role)


@dataclass
class Context:
    """What a check may use: the prepared task, the sandbox, the submission's source."""

    prepared: PreparedTask
    sandbox: Sandbox
    source: PythonSource
    runtime_imports: list[str]
    script: ScriptRun = field(default_factory=ScriptRun)
    # the arguments of the input each failed visible call check shows (diagnosis.py); kept
    # here, on the trusted side, never in a result
    shown: dict[str, dict] = field(default_factory=dict)
    # the failed visible checks of the work whose wrong answer still showed work (policy.py)
    near: set[str] = field(default_factory=set)
    # what the submission already answered on the inputs a diagnosis observes first (its
    # shown input, its smallest cases): check name -> id(args) -> (args, Answered), so
    # diagnosis.py does not call it again for them; trusted side only, never in a result
    answered: dict[str, dict[int, tuple[dict, Answered]]] = field(default_factory=dict)
    # the visible checks' failures waiting to be shrunk (shrinking/search.py: FirstFailure), once the
    # other checks have run (run.py); None: a failure is shrunk as it is found
    shrinks_later: list[Any] | None = None
    shrink_lanes: bool = False  # shrink them in two lanes (shrinking/lanes.py: one file in one process)
    shrink_cache: bool = True  # walk earlier shrinks' paths first, keep this one's (shrinking/tree.py)
    _numbers: Numbers | None = field(default=None, repr=False)
    # check name -> (the case set, its call limits): asked again for every input a shrink tries
    _limits: dict[str, tuple[CaseSet, list[CallLimit]]] = field(default_factory=dict, repr=False)

    @property
    def task(self) -> Task:
        return self.prepared.task

    @property
    def reference(self) -> ModuleType | None:
        """The trusted reference; None in a kit, which has frozen cases instead."""
        return self.prepared.reference

    def source_numbers(self) -> Numbers:
        """The numbers the submission's source holds, written or encoded, ready for the
        typed-in rule (source_numbers.py, checks/typed_in.py): read once, when asked."""
        if self._numbers is None:
            # (read in the bounded child with the rest, source_scan.py; a file it could not
            # read runs no check that asks)
            self._numbers = Numbers(self.source.numbers or SourceNumbers((), (), capped=True))
        return self._numbers

    def remember_answer(self, check: CheckSpec, args: dict, value: Any = None, raised: bool = False) -> None:
        """Keep what the submission answered on ``args`` (its output, or that it raised)
        for the diagnosis, up to ANSWER_KEPT_BYTES of output."""
        if raised or nbytes(value) <= ANSWER_KEPT_BYTES:
            self.answered.setdefault(check.name, {})[id(args)] = (args, Answered(value, raised))

    def answer_on(self, check: CheckSpec, args: dict) -> Answered | None:
        """What the submission answered on these very ``args`` (the same object), if kept."""
        kept = self.answered.get(check.name, {}).get(id(args))
        return kept[1] if kept is not None and kept[0] is args else None

    def case_set(self, check: CheckSpec) -> CaseSet:
        return self.prepared.case_set(check)

    def check_cases(self, check: CheckSpec) -> CaseSet:
        return self.prepared.check_cases(check)

    def reference_value(self, check: CheckSpec) -> Any:
        return self.prepared.reference_value(check)

    def expected(self, check: CheckSpec, args: dict[str, Any]) -> Any:
        return self.prepared.expected(check, args)

    def call_limits(self, check: CheckSpec, cases: CaseSet) -> list[CallLimit]:
        """Each case's call limit (call_limits.py), in the order of ``cases.cases``."""
        known = self._limits.get(check.name)
        if known is not None and known[0] is cases:
            return known[1]
        found = self._find_call_limits(check, cases)
        self._limits[check.name] = (cases, found)
        return found

    def largest_call_limit(self, check: CheckSpec) -> CallLimit | None:
        """The limit of a new input drawn from the check's ranges: its largest case's."""
        return max(
            self.call_limits(check, self.case_set(check)), key=lambda limit: limit.seconds, default=None
        )

    def _find_call_limits(self, check: CheckSpec, cases: CaseSet) -> list[CallLimit]:
        limits = self.sandbox.limits
        times = self.prepared.times
        seconds = times.seconds(check, cases) if limits.call_limit != "absolute" else None
        seconds = None if seconds is None else times.pooled(check, cases, seconds)
        return [
            derived_limit(limits, None if seconds is None else seconds[i]) for i in range(len(cases.cases))
        ]
