"""What a kind's module declares: ``KIND``, an instance of a ``Kind`` subclass.

The contract is task/check_kind.py's ``CheckKind`` (its docstrings say what each method is
asked and by whom); ``Kind`` gives the usual answer to each question, so that a kind's class
says only its name, the tasks it fits, its own task.yaml fields (its piece of the JSON
Schema, see schema.py), its ``read`` and ``run``, and the answers where it differs.
Everything else about a check (name, points, needs, hidden, hint, the function it calls) is
common and lives in ``CheckSpec``.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from grader.task.check_kind import COMMON_FIELDS, CheckOptions, Reading

if TYPE_CHECKING:
    from grader.grading.context import Context
    from grader.records.result import CheckResult
    from grader.task.spec import CheckSpec

TaskKind = Literal["functions", "script"]
FUNCTIONS: tuple[TaskKind, ...] = ("functions",)
SCRIPT: tuple[TaskKind, ...] = ("script",)
ANY_TASK: tuple[TaskKind, ...] = ("functions", "script")


class Kind:
    """A check kind: the usual answers of the contract (check_kind.CheckKind)."""

    name: str
    families: tuple[TaskKind, ...]  # the tasks it fits
    fields: ClassVar[dict[str, dict]] = {}  # its own fields -> JSON Schema
    required: ClassVar[tuple[str, ...]] = ()  # which of them a check must give

    def __repr__(self) -> str:
        # Its name only: a check's repr keys the disk caches (cases, reference times, shrink
        # paths), and the functions' addresses above change with every process.
        return f"Kind({self.name!r})"

    def fits(self, task_kind: str) -> bool:
        return task_kind in self.families

    def schema(self) -> dict[str, Any]:
        piece: dict[str, Any] = {}
        if self.required:
            piece["required"] = list(self.required)
        piece["propertyNames"] = {"enum": list(COMMON_FIELDS) + list(self.fields)}
        if self.fields:
            piece["properties"] = self.fields
        return {"if": {"properties": {"kind": {"const": self.name}}}, "then": piece}

    def read(self, reading: Reading) -> CheckOptions:
        return CheckOptions()

    def draws_cases(self) -> bool:
        return False

    def reference_computes_expected(self, options: Any) -> bool:
        return False

    def given_case(self, options: Any) -> tuple[dict[str, Any], Any] | None:
        return None

    def compares_with_reference_value(self) -> bool:
        return False

    def reference_value(self, reference: ModuleType, check: CheckSpec[Any]) -> Any:
        raise TypeError(f"a {self.name} check compares with no reference value")

    def run(self, ctx: Context, check: CheckSpec[Any]) -> CheckResult:
        raise NotImplementedError(f"the {self.name} kind runs no check")

    def judges_the_file(self) -> bool:
        return False

    def describe_mismatch(self, options: Any) -> str:
        return "what it produced is not what the check asks for"

    def compares_outputs(self) -> bool:
        return False

    def counts_only_with_work(self) -> bool:
        return False

    def answer_is_private(self) -> bool:
        return False

    def answer_carries_arrays(self) -> bool:
        return False
