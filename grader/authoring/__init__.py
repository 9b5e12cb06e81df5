"""Authoring a task: what an instructor's commands do, and reading a task as the grader
does. The rest of the grader uses only what this face names.

- ``load_task``: task.yaml read and checked (task/task_yaml.py) with the grader's check kinds;
- validation.py: ``grader validate`` (the task's rules, its freeze, its samples' verdicts);
- freezing.py: ``grader freeze`` (the cases computed, written by cases/freeze_files.py);
- kit.py: ``grader kit`` (the statement, the public checks and their frozen cases).

Above grading: validating grades the samples, freezing profiles the known mistakes.
"""

from __future__ import annotations

from grader.authoring.freezing import freeze
from grader.authoring.kit import make_kit
from grader.authoring.validation import Finding, Validation, display_note, validate
from grader.grading import KINDS
from grader.task.spec import Task
from grader.task.task_yaml import read_task

__all__ = ["Finding", "Validation", "display_note", "freeze", "load_task", "make_kit", "validate"]


def load_task(folder: str) -> Task:
    """The task in ``folder`` (its task.yaml read and checked: task/task_yaml.py), with the
    check kinds of grading/checks/: the one call the rest of the grader reads a task with."""
    return read_task(folder, KINDS)
