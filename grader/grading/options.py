"""How one grade is to be run: the sandbox tier asked for, limits from the command line, the
case cache, warm workers. Plain data with no heavy import, so that the command line can build
it without loading the grading stack (numpy, the checks): grade.py takes it."""

from __future__ import annotations

from dataclasses import dataclass, field

# The grader's speed-ups (speedups.py decides each): none of them changes a report.
SPEEDUPS = frozenset({"head-start", "shrink-lanes", "shrink-cache"})


@dataclass
class GradeOptions:
    isolation: str = "auto"  # auto or a tier's name (sandbox.NAMES)
    others_work: bool = False  # someone else's work: never the rlimits tier
    # A student's own check (grader check without --others-work, grader ci): only then may a
    # kit be graded unsandboxed (own_machine.py). No other command sets it.
    own_machine: bool = False
    shared_state: bool = False  # ... nor a tier whose workers could share state, unless accepted
    limits: dict = field(default_factory=dict)  # overrides of the task's limits
    use_cache: bool = True  # reuse generated cases across runs
    warm_workers: bool = False  # fork workers from a warm server (batch)
    # one file in one process (grader check): its shrinks in two lanes (lanes.py)
    shrink_lanes: bool = False
    # the speed-ups on: all unless --no-speedups or $GRADER_NO_SPEEDUPS (speedups.py)
    speedups: frozenset[str] = SPEEDUPS
