"""Authoring a task: reading it as the grader does (``load_task``: task.yaml with the
grader's check kinds), ``grader validate``, ``grader freeze``, ``grader kit``."""

from __future__ import annotations

from grader.grading.checks import KINDS
from grader.task.spec import Task
from grader.task.task_yaml import read_task


def load_task(folder: str) -> Task:
    """The task in ``folder`` (its task.yaml read and checked: task/task_yaml.py), with the
    check kinds of grading/checks/: the one call the rest of the grader reads a task with."""
    return read_task(folder, KINDS)
