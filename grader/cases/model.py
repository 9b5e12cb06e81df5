"""A check's argument sets with the reference's expected outputs (plain data), and the two
ways building them fails (task bugs, told to the instructor).

Its own module so that the freeze's reader (freeze_files.py) and the generator (generate.py) share it
without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class CaseSet:
    cases: list[dict]  # argument sets, in the order they are tried
    expected: list  # the reference's output for each (None where not needed)
    literal_count: int  # the first ones are literal (examples, edge cases)
    # per case, argument name -> how to rebuild an array drawn from a seed (rebuild.py);
    # shown to the student, never graded on (an empty list: none recorded)
    recipes: list[dict] = field(default_factory=list)

    def recipes_of(self, index: int) -> dict:
        return self.recipes[index] if index < len(self.recipes) else {}


class ReferenceFailed(Exception):
    """The trusted reference raised on a case: a task bug, reported to the instructor."""


class CasesFailed(Exception):
    """A check's cases cannot be generated (a range emptied by the values it refers to,
    a strategy Hypothesis refuses): a task bug, reported to the instructor."""
