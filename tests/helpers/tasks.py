"""Tasks and submissions made for a test, and scores read from a task: small tasks in a
temporary folder (``make_task``), a task's total less the checks a file fails
(``score_without``), the example course with the instructor's full tasks."""

import functools
import os
import shutil
import textwrap

from helpers.paths import COURSE, INSTRUCTOR_TASKS, PE_TASK


@functools.cache
def _points(task: str) -> dict[str, float]:
    from grader.authoring import load_task

    return {c.name: c.points for c in load_task(task).checks}


def score_without(*lost: str, task: str = PE_TASK) -> float:
    """The task's total less the points of the checks named (what a file that fails exactly
    those scores), read from the task: tests hold to the task, not to today's numbers."""
    points = _points(task)
    return sum(points.values()) - sum(points[name] for name in lost)


def as_cell(points: float) -> str:
    """A score as the gradebook's CSV and the text report write it (33, not 33.0)."""
    return f"{points:g}"


IGNORES_BASE_LOSES = ("table-custom-base", "add-custom-base")  # mistake_ignores_base.py's


def write(path, text):
    path.write_text(textwrap.dedent(text).lstrip())
    return str(path)


SQUARE_REFERENCE = """
import numpy as np

def square(x):
    return np.asarray(x, dtype=float) ** 2
"""


def make_task(folder, yaml_text, reference=SQUARE_REFERENCE):
    """A small task in a temporary folder, for tests of the engine itself."""
    folder.mkdir(parents=True, exist_ok=True)
    write(folder / "task.yaml", yaml_text)
    write(folder / "reference.py", reference)
    write(folder / "statement.md", "A test task.\n")
    return str(folder)


# A normalize-rows solution that changes its input in place (and makes rows of zeros NaN).
WRONG_NORMALIZE = """
import numpy as np

def normalize_rows(m):
    m /= np.linalg.norm(m, axis=1, keepdims=True)   # in place, and rows of zeros become NaN
    return m
"""


def course_with_full_tasks(folder):
    """The example student repository with the instructor's full tasks (hidden checks and
    references) in place of its kits: what final grading by CI sees."""
    shutil.copytree(COURSE, folder)
    shutil.rmtree(os.path.join(folder, "tasks"))
    shutil.copytree(INSTRUCTOR_TASKS, os.path.join(folder, "tasks"))
    return folder
