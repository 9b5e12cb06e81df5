"""A check kind's contract: the few methods a kind answers, as a plugin's hooks are its
contract (each method's docstring says what it is asked and by whom).

A ``CheckSpec.kind`` meets it, resolved when task.yaml is read (task_yaml.py, given the
kinds), so that nothing below the kinds' own modules (grading/checks/, one registry line
each) looks a kind up by its name or imports one: the cases, the call limits, the prepared
task, the policy and final grading ask the check's kind. Also here: what a kind's ``read``
gets (``Reading``), the base of a kind's options record (``CheckOptions``) and the fields
every check has (``COMMON_FIELDS``), so that the task.yaml reader needs no kind's module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from grader.task.tolerance import Tolerance

if TYPE_CHECKING:
    from grader.records.result import CheckResult

# The check a method is asked about: spec.py's CheckSpec, which names this protocol (so this
# module names it back only as a type parameter: CheckSpec.kind is a CheckKind[CheckSpec]).
C = TypeVar("C", contravariant=True)

# The fields every check has, in the order editors list them; the kind enum is the registry's.
COMMON_FIELDS: dict[str, dict] = {
    "name": {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]*$"},
    "kind": {},
    "description": {
        "type": "string",
        "description": "The rule this check enforces, in words a student understands.",
    },
    "points": {"type": "number", "minimum": 0},
    "needs": {
        "type": "array",
        "items": {"type": "string"},
        "description": "Checks that must pass first; otherwise this one is skipped.",
    },
    "hidden": {"type": "boolean"},
    "edges": {
        "type": "array",
        "items": {"type": "string"},
        "description": "Edges of the task (edges:) this check judges although it lists no case "
        "there: its drawn cases may fall on them.",
    },
    "hint": {
        "type": "string",
        "description": "Advice shown after this check's message when it fails (e.g. 'x + pe "
        "rather than x += pe'); hidden with the rest of a hidden check.",
    },
}


@dataclass(frozen=True)
class CheckOptions:
    """A kind's own fields; this base is the record of a kind that has none (imports)."""

    @property
    def shows_work(self) -> bool:
        """A pass shows that the submission does some of the work (policy.py)."""
        return True

    @property
    def reference_function(self) -> str | None:
        """The reference function (besides the one the check calls) that gives its value."""
        return None


@dataclass(frozen=True)
class Reading:
    """What a kind's ``read`` gets: one check's mapping from task.yaml (valid against the
    schema) and how to report a problem at a field."""

    raw: dict
    at: tuple
    call: str | None  # the student function it calls (common field)
    params: tuple[str, ...]  # that function's parameters
    default_tolerance: Tolerance  # the task's, which the check's own overrides
    default_cases: int  # the task's number of generated cases
    problem: Callable[[tuple, str], None]

    def tolerance(self) -> Tolerance:
        return Tolerance(**{**self.default_tolerance.as_dict(), **self.raw.get("tolerance", {})})


class CheckKind(Protocol[C]):
    """What a check kind answers (grading/checks/kind.py: ``Kind`` gives the usual answers)."""

    @property
    def name(self) -> str:
        """Its name, as task.yaml's ``kind:`` gives it."""
        ...

    # ------------------------------------------------------------------ task.yaml (task_yaml.py)

    def fits(self, task_kind: str) -> bool:
        """Whether a check of this kind may be in a task of this kind (functions, script)."""
        ...

    def schema(self) -> dict[str, Any]:
        """Its piece of the JSON Schema: the fields a check of this kind may and must hold."""
        ...

    def read(self, reading: Reading) -> CheckOptions:
        """Its fields read into its options record (``CheckSpec.options``), with the rules a
        schema cannot express, each reported by ``reading.problem``."""
        ...

    # ------------------------------------------------------------------ its cases (cases/)

    def draws_cases(self) -> bool:
        """Hypothesis draws its cases, after the literal ones (``options.literal_cases``)."""
        ...

    def reference_computes_expected(self, options: Any) -> bool:
        """The reference computes each of its cases' expected output (else none is kept)."""
        ...

    def given_case(self, options: Any) -> tuple[dict[str, Any], Any] | None:
        """The argument set and the expected value the task gives itself (an example's
        literal ``expect:``), tried instead of the check's case set; None: its case set is
        what it tries."""
        ...

    def compares_with_reference_value(self) -> bool:
        """It compares with one value the reference computes (``reference_value``: a script
        check's answer or table), frozen with the task and timed for the call limits."""
        ...

    def reference_value(self, reference: ModuleType, check: C) -> Any:
        """That value, computed by the trusted reference."""
        ...

    # ------------------------------------------------------------------ grading (run.py)

    def run(self, ctx: Any, check: C) -> CheckResult:
        """Judge one check of one submission; ``ctx`` is the grade's context (grading/
        context.py: the prepared task, the sandbox, the source)."""
        ...

    def judges_the_file(self) -> bool:
        """It reads the file itself: it runs when the file did not load, and after the other
        checks of its group, so that it weighs what every call before it showed."""
        ...

    def describe_mismatch(self, options: Any) -> str:
        """What a "mismatch" reason means for a check of this kind with these options, in
        words for the class summary ("the values differ from the reference"); never read
        from a student's message."""
        ...

    # ------------------------------------------------------------------ the policy, kits, caps

    def compares_outputs(self) -> bool:
        """It compares a function's output with the reference's (checks/calls.py: compare_output):
        known mistakes are profiled on it, and whether one repeated value passes it is asked
        (policy.py: one_fill)."""
        ...

    def counts_only_with_work(self) -> bool:
        """It judges how the work is done, not what it produces (imports, mutation): its
        points count only when the submission does some of the work (policy.py)."""
        ...

    def answer_is_private(self) -> bool:
        """Its expected values are the answer itself (one who holds the table can type it
        in): they never leave the instructor's side, a kit holds nothing of them and runs no
        check of it (final grading does), and a file's typed-in numbers are read for it."""
        ...

    def answer_carries_arrays(self) -> bool:
        """The worker's answer for it carries an array the size of its reference value: the
        answer cap grows with it (prepared.py)."""
        ...
