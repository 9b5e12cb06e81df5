"""What the class benchmarks share: the positional-encoding task, its samples, and a class
made of copies of them (half correct, half buggy by default)."""

from __future__ import annotations

import os
import shutil

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TASK = os.path.join(ROOT, "tasks", "positional-encoding")
SAMPLES = os.path.join(ROOT, "submissions", "positional-encoding")
CORRECT = ["correct_vectorized.py", "correct_exp_log.py"]
BUGGY = [
    "mistake_exponent_missing_two.py",
    "mistake_sin_cos_swapped.py",
    "mistake_adds_in_place.py",
    "mistake_ignores_base.py",
    "mistake_odd_last_column_filled.py",
    "mistake_returns_list.py",
]


def make_class(
    folder: str, students: int, kind: str = "mixed", correct: list[str] = CORRECT, name: str = "s{:03d}.py"
) -> None:
    """``students`` copies of the samples in ``folder``: all ``correct``, all buggy, or
    mixed (every other one), named by ``name``."""
    os.makedirs(folder)
    for i in range(students):
        pool = correct if kind == "correct" or (kind == "mixed" and i % 2 == 0) else BUGGY
        shutil.copy(os.path.join(SAMPLES, pool[i % len(pool)]), os.path.join(folder, name.format(i)))
