"""How one grade is to be run: the sandbox tier asked for, limits from the command line, the
case cache, warm workers (GradeOptions); and the tier a grade runs in, chosen from those options
and the task (tier_for: the one place outside the sandbox that calls choose_tier).

A grade may run unsandboxed only if it is of a kit checked by its own student. The unsandboxed
tier (a student's own machine: macOS, Windows) has nothing between the submission and the
machine, so it is taken for one grade only: a task that holds nothing of the instructor's (a
kit: no reference, no hidden checks, no known mistakes), graded by a command that grades the
student's own work (``GradeOptions.own_machine``: `grader check` without --others-work, `grader
ci` of a course without hidden checks). `grader batch`, Gradescope's `grader check
--others-work`, `grader ci` with hidden checks, `grader validate` and any command that does not
say so never do, whatever --isolation or GRADER_ISOLATION ask for (choose_tier refuses the tier
then).

Plain data and a light import (the sandbox's facade, as the command line already has it): the
command line builds the options without loading the grading stack (numpy, the checks), and
run.py takes them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from grader.sandbox import choose_tier

if TYPE_CHECKING:
    from grader.task.spec import Task

REFERENCE_FILE = "reference.py"  # (a full task's, whatever its task.yaml names)

# The grader's speed-ups (speedups.py decides each): none of them changes a report.
SPEEDUPS = frozenset({"head-start", "shrink-lanes", "shrink-cache"})


@dataclass
class GradeOptions:
    isolation: str = "auto"  # auto or a tier's name (sandbox.NAMES)
    others_work: bool = False  # someone else's work: never the rlimits tier
    # A student's own check (grader check without --others-work, grader ci): only then may a
    # kit be graded unsandboxed (tier_for). No other command sets it.
    own_machine: bool = False
    shared_state: bool = False  # ... nor a tier whose workers could share state, unless accepted
    limits: dict = field(default_factory=dict)  # overrides of the task's limits
    use_cache: bool = True  # reuse generated cases across runs
    warm_workers: bool = False  # fork workers from a warm server (batch)
    # one file in one process (grader check): its shrinks in two lanes (shrinking/lanes.py)
    shrink_lanes: bool = False
    # the speed-ups on: all unless --no-speedups or $GRADER_NO_SPEEDUPS (speedups.py)
    speedups: frozenset[str] = SPEEDUPS


def tier_for(options: GradeOptions, task: Task | None = None) -> str:
    """The tier a grade of ``task`` runs in as ``options`` ask (choose_tier's answer, or its
    SandboxUnavailable). ``task`` None where no task is read yet (a worker started ahead,
    prestart.py) or a class is graded at once (batch, serve: others' work, never a kit): the
    kit rule is then not met, so no kit-only tier is taken; the grade chooses again with its
    task."""
    kit = task is not None and kit_at_home(task, options)
    return choose_tier(options.isolation, options.others_work, options.shared_state, kit)


def kit_at_home(task: Task, options: GradeOptions) -> bool:
    """Whether this grade is of a kit by its own student (choose_tier's ``kit``)."""
    return options.own_machine and not options.others_work and is_kit(task)


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
