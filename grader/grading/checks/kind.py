"""What a check kind is: the record that each kind's module declares as ``KIND``.

A kind says which tasks it fits, its own task.yaml fields (its piece of the JSON Schema,
see schema.py), how those fields are read into its options record (``CheckSpec.options``)
with the rules a schema cannot express, whether its cases are generated and its expected
values computed by the reference, and how it runs. Everything else about a check (name,
points, needs, hidden, hint, the function it calls) is common and lives in ``CheckSpec``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from grader.task.tolerance import Tolerance

if TYPE_CHECKING:
    from grader.records.result import CheckResult
    from grader.task.spec import CheckSpec

TaskKind = Literal["functions", "script"]
FUNCTIONS: tuple[TaskKind, ...] = ("functions",)
SCRIPT: tuple[TaskKind, ...] = ("script",)
ANY_TASK: tuple[TaskKind, ...] = ("functions", "script")

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


@dataclass(frozen=True)
class Kind:
    name: str
    families: tuple[TaskKind, ...]  # the tasks it fits
    run: Callable[[Any, CheckSpec[Any]], CheckResult]
    read: Callable[[Reading], CheckOptions] = lambda reading: CheckOptions()
    fields: dict[str, dict] = field(default_factory=dict)  # its own fields -> JSON Schema
    required: tuple[str, ...] = ()  # which of them a check must give
    generated_cases: bool = False  # Hypothesis draws cases besides the literal ones
    expected_values: bool = False  # the reference computes each case's expected output
    # Judges the file itself: it runs when the file did not load, and after the other checks
    # of its group so that it weighs what the submission was seen doing in every call.
    reads_source: bool = False
    # Judges how the work is done, not what it produces (imports, mutation): its points count
    # only when the submission does some of the work (policy.py).
    policy: bool = False
    # Script kinds: the reference's value it compares with (frozen with the task).
    reference_value: Callable[[Any, CheckSpec[Any]], Any] | None = None
    # Its expected values never leave the instructor's side: they are the answer itself (a
    # "did the work" check: one who holds the table can type it in). A student kit holds
    # nothing of them, and runs no check of this kind: it is checked at final grading
    # (final_grading.py).
    expected_private: bool = False
    # The worker's answer carries an array the size of that value: the answer cap grows with it.
    arrays_in_answer: bool = False
    # What a "mismatch" reason means for a check of this kind, given its options: words for
    # the class summary ("exponent-2i-over-d failed for 12 students (the values differ from
    # the reference)"), never read from a student's message.
    mismatch: Callable[[Any], str] = lambda options: "what it produced is not what the check asks for"

    def __repr__(self) -> str:
        # Its name only: a check's repr keys the disk caches (cases, reference times, shrink
        # paths), and the functions' addresses above change with every process.
        return f"Kind({self.name!r})"

    def schema(self) -> dict:
        """Its piece of the JSON Schema: what a check of this kind may and must hold."""
        piece: dict[str, Any] = {}
        if self.required:
            piece["required"] = list(self.required)
        piece["propertyNames"] = {"enum": list(COMMON_FIELDS) + list(self.fields)}
        if self.fields:
            piece["properties"] = self.fields
        return {"if": {"properties": {"kind": {"const": self.name}}}, "then": piece}
