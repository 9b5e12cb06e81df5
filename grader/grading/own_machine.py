"""Whether a grade may run unsandboxed: only a kit, checked by its own student.

The unsandboxed tier (a student's own machine: macOS, Windows) has nothing between the
submission and the machine, so it is taken for one grade only: a task that holds nothing of
the instructor's (a kit: no reference, no hidden checks, no known mistakes), graded by a
command that grades the student's own work (``GradeOptions.own_machine``: `grader check` without
--others-work, `grader ci` of a course without hidden checks). `grader batch`, Gradescope's
`grader check --others-work`, `grader ci` with hidden checks, `grader validate` and any
command that does not say so never do, whatever --isolation or GRADER_ISOLATION ask for
(choose_tier refuses the tier then).
"""

from __future__ import annotations

import os

from grader.grading.options import GradeOptions
from grader.task.spec import Task

REFERENCE_FILE = "reference.py"  # (a full task's, whatever its task.yaml names)


def is_kit(task: Task) -> bool:
    """No reference (neither the file task.yaml names nor a reference.py beside it), no
    hidden check and no known mistake: what `grader kit` makes, nothing of the instructor's."""
    return (
        not os.path.lexists(task.reference_path)
        and not os.path.lexists(os.path.join(task.folder, REFERENCE_FILE))
        and not any(check.hidden for check in task.checks)
        and not task.mistakes
        and not (task.mistakes_path and os.path.lexists(task.mistakes_path))
    )


def kit_at_home(task: Task, options: GradeOptions) -> bool:
    """Whether this grade is of a kit by its own student (choose_tier's ``kit``)."""
    return options.own_machine and not options.others_work and is_kit(task)
