"""A task as records: ``Task``, its ``CheckSpec``s and ``MistakeSpec``s, and ``SpecError``.

Plain data, built from a task.yaml by task_yaml.py (given the check kinds, which live in
grading/: ``grader.authoring.load_task`` passes them); everything below grading reads these
records.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from grader.records.limits import Limits
from grader.task.tolerance import Tolerance

if TYPE_CHECKING:  # (an annotation only: edges.py imports numpy, and SpecError is wanted light)
    from grader.task.check_kind import CheckKind
    from grader.task.edges import Edge

# The published schema ships as package data at grader/schema/ (pyproject.toml).
SCHEMA_PATH = os.path.join(os.path.dirname(os.path.dirname(__file__)), "schema", "task.schema.json")
DEFAULT_CASES = 50


class SpecError(Exception):
    """A task spec is wrong; ``problems`` are ready-to-print lines (file:line: field: what)."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


O = TypeVar("O", covariant=True)  # (read-only: a check of a narrower record fits)


@dataclass(frozen=True)
class CheckSpec(Generic[O]):
    """What every check has; ``options`` holds its kind's own fields (a record the kind's
    module defines: grader/grading/checks/)."""

    name: str
    kind: CheckKind[CheckSpec[Any]]  # its kind, resolved when task.yaml is read (check_kind.py)
    options: O
    points: float = 1.0
    description: str = ""
    needs: tuple[str, ...] = ()
    hidden: bool = False
    call: str | None = None  # the student function it calls, for kinds that call one
    line: int = 0
    hint: str = ""  # advice shown after its message when it fails
    edges: tuple[str, ...] = ()  # task edges it judges though it lists no case there (edges.py)

    def function(self) -> str:
        """The student function it calls; only for a kind that calls one."""
        if self.call is None:
            raise TypeError(f"check '{self.name}' ({self.kind.name}) calls no function")
        return self.call

    @property
    def reference_functions(self) -> tuple[str, ...]:
        own = getattr(self.options, "reference_function", None)
        return tuple(f for f in (self.call, own) if f)


@dataclass(frozen=True)
class MistakeSpec:
    """A known mistake: the reference with some task functions replaced by functions of the
    task's mistakes.py (mistakes.py), and what to tell a student whose outputs match it."""

    name: str
    explanation: str
    replaces: tuple[tuple[str, str], ...]  # (task function, function of mistakes.py)
    line: int = 0


MISTAKES_FILE = "mistakes.py"
# When students see a hidden check's line on Gradescope (its visibility there: the line says
# only passed or failed and its points, grading/redact.py); task.yaml's hidden_visibility.
HIDDEN_VISIBILITIES = ("after_due_date", "after_published", "hidden")
DEFAULT_HIDDEN_VISIBILITY = "after_due_date"
# The display libraries of a task that names none (imports: display): matplotlib, and
# seaborn, which draws with it.
DEFAULT_DISPLAY = ("matplotlib", "seaborn")


@dataclass(frozen=True)
class Task:
    id: str
    title: str
    version: str
    kind: str  # functions | script
    folder: str
    spec_path: str
    statement_path: str
    reference_path: str
    functions: dict[str, tuple[str, ...]]
    allowed_imports: tuple[str, ...]
    stdlib_imports: tuple[str, ...]
    limits: Limits
    tolerance: Tolerance
    checks: tuple[CheckSpec, ...]
    digest: str
    mistakes: tuple[MistakeSpec, ...] = ()
    mistakes_path: str = ""  # mistakes.py beside task.yaml (read only when mistakes are declared)
    edges: tuple[Edge, ...] = ()  # inputs only the checks about them judge (edges.py)
    # Display-only libraries (imports: display): headless in the worker, a stand-in that
    # draws nothing where they are not installed (sandbox/inside/display.py). Importing
    # one costs no imports check; what the functions under test reach of one does
    # (checks/imports.py).
    display_imports: tuple[str, ...] = DEFAULT_DISPLAY
    hidden_visibility: str = DEFAULT_HIDDEN_VISIBILITY  # one of HIDDEN_VISIBILITIES
    # Uploads grader serve accepts per student (task.yaml attempts:); None: the server's --attempts.
    attempts: int | None = None

    @property
    def max_score(self) -> float:
        return sum(c.points for c in self.checks)
