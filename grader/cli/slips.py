"""The slips a student makes naming what ``grader check`` grades, answered for the student:
the two arguments the wrong way round, a folder of kits for one kit, a folder that is no
task. Each is said with the command that was meant, and never sends a student to the task
writers' guide (a task's spec problems are its writer's to fix).

Read only here: whether paths are folders holding a task.yaml (nothing of a submission is
opened; the grade reads it, once, as ever)."""

from __future__ import annotations

import os
import re
import shlex

from grader.task.spec import SpecError

SHOWN_CANDIDATES = 5  # tasks of a folder of kits named in a "did you mean"

# The pointer a spec problem gives its writer (task_yaml.py, the schema's descriptions)
_WRITERS_GUIDE = re.compile(r"\s*\(see docs/task-writers\.md[^)]*\)")


def _is_task(path: str) -> bool:
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, "task.yaml"))


def tasks_in(folder: str) -> list[str]:
    """The subfolders of ``folder`` that hold a task.yaml (a folder of kits), by name."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [name for name in names if _is_task(os.path.join(folder, name))]


def _words(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", name.lower())


def _ranked(folder: str, submission: str) -> list[str]:
    """The tasks of a folder of kits, those whose name the file's name holds first."""
    stem = _words(os.path.splitext(os.path.basename(submission.rstrip("/")))[0])
    names = tasks_in(folder)
    return sorted(names, key=lambda name: not (_words(name) and _words(name) in stem))


def _command(task: str, submission: str) -> str:
    return f"grader check {shlex.quote(task)} {shlex.quote(submission)}"


def _kits_folder(folder: str, submission: str) -> str | None:
    """What to say of a folder of kits given as the task, or None when it is not one."""
    names = _ranked(folder, submission)
    if not names:
        return None
    paths = [os.path.join(folder, name) for name in names]
    shown = ", ".join(paths[:SHOWN_CANDIDATES]) + (
        f" (and {len(paths) - SHOWN_CANDIDATES} more)" if len(paths) > SHOWN_CANDIDATES else ""
    )
    return (
        f"{folder} is a folder of tasks, not one task: did you mean {paths[0]}? "
        f"({_command(paths[0], submission)}; the tasks in it: {shown})"
    )


def check_slips(task: str, submission: str) -> str | None:
    """What ``grader check TASK SUBMISSION`` should say instead of grading, when its
    arguments are a slip; None when TASK is a task folder (or nothing this can tell)."""
    if _is_task(task):
        return None
    if submission != "-" and _is_task(submission):
        return (
            "the two are the wrong way round: the task folder comes first, then your file. "
            f"Did you mean: {_command(submission, task)}?"
        )
    if os.path.isdir(task):
        kits = _kits_folder(task, submission)
        if kits:
            return kits
    if submission != "-" and os.path.isdir(submission) and (names := _ranked(submission, task)):
        meant = os.path.join(submission, names[0])
        return (
            "the two are the wrong way round (the task folder comes first, then your file), "
            f"and {submission} is a folder of tasks: did you mean: {_command(meant, task)}?"
        )
    if os.path.isdir(task):
        return (
            f"{task} is not a task folder: it holds no task.yaml. Give the folder of the task "
            "(the one your instructor gave you, holding task.yaml), then your file."
        )
    if not os.path.exists(task):
        return (
            f"{task}: no such task folder. Give the folder of the task (it holds task.yaml), then your file."
        )
    return (
        f"{task} is a file, not a task folder. Give the folder of the task (it holds task.yaml) "
        "first, then your file."
    )


def spec_problems_for_students(error: SpecError) -> SpecError:
    """A task's spec problems as ``grader check`` says them: without the pointers to the
    task writers' guide, and whose to fix they are."""
    problems = [_WRITERS_GUIDE.sub("", problem) for problem in error.problems]
    return SpecError([*problems, "(the task's writer fixes these: tell whoever gave you the task)"])
