"""A check's kind, looked up by the name its CheckSpec carries.

The kinds' modules (checks/) use cases.py and policy.py, which ask a check's kind in turn: the
registry is therefore read when a check is judged, not when this module is imported (the one
import inside a function that keeps grading's modules free of a loop).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from grader.grading.checks.kind import Kind


def kind_of(check: Any) -> Kind:
    """The kind of a CheckSpec (its ``kind`` names one: the schema allows no other)."""
    from grader.grading.checks import KINDS

    return KINDS[check.kind]
