"""What a check kind is to the parts below grading (cases, call limits, the task's records):
the contract a ``CheckSpec.kind`` meets, resolved when task.yaml is read, so that nothing
below the kinds' own modules (grading/checks/) has to look a kind up by its name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol


class CheckKind(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def generated_cases(self) -> bool: ...

    @property
    def expected_values(self) -> bool: ...

    @property
    def reads_source(self) -> bool: ...

    @property
    def policy(self) -> bool: ...

    @property
    def expected_private(self) -> bool: ...

    @property
    def arrays_in_answer(self) -> bool: ...

    @property
    def reference_value(self) -> Callable[[Any, Any], Any] | None: ...

    @property
    def mismatch(self) -> Callable[[Any], str]: ...

    @property
    def run(self) -> Callable[[Any, Any], Any]: ...
