"""Checks a student kit leaves to final grading, and how a kit's report says so.

A check kind whose expected values must never leave the instructor's side says so
(``answer_is_private``, task/check_kind.py): the leaves kinds, whose expected value is the
very table the script must compute (one who holds it can type it in). A kit holds nothing of
such a check's expected values (no frozen value, nothing in its task.yaml), so it cannot
run it: the check is graded at final grading only, on the full task. In a kit:

- a check of such a kind is not run: its line says "checked at final grading", with its
  points, and it is not in the kit's score;
- so is a check that ``needs:`` one of them (there it would only ever be skipped): it is
  decided at final grading, where what it needs is decided;
- a policy check (imports, mutation) whose points hang only on such checks (policy.py: it
  counts when a check of the work passes, and every check of the work is one of these)
  still runs, and its verdict is shown, but its points are decided at final grading too.

So a kit's score is over the checks it can decide, and each of them scores in the kit what
it scores in the full task. The full task runs every check as ever.
"""

from __future__ import annotations

import dataclasses
import textwrap
from dataclasses import dataclass

from grader.cases import load_freeze
from grader.grading.policy import judges
from grader.records.result import SKIPPED, CheckResult
from grader.records.statuses import FINAL_GRADING
from grader.records.wording import points as _points
from grader.task.spec import CheckSpec, Task


@dataclass(frozen=True)
class Later:
    """A check of a kit decided at final grading."""

    name: str
    points: float
    runs: bool  # the kit still runs it (a policy check) and shows its verdict
    why: str  # why it waits, for the student


def in_a_kit(checks: list[CheckSpec] | tuple[CheckSpec, ...]) -> dict[str, Later]:
    """Which of a kit's checks (its public ones) wait for final grading, and why."""

    later: dict[str, Later] = {}
    for check in checks:
        if check.kind.answer_is_private():
            later[check.name] = Later(
                check.name, check.points, False, "this kit holds nothing of what it compares with"
            )
    changed = True
    while changed:  # (a check that needs a check that needs one of them: found in turn)
        changed = False
        for check in checks:
            waiting = [n for n in check.needs if n in later]
            if check.name not in later and waiting:
                later[check.name] = Later(
                    check.name, check.points, False, f"it needs '{waiting[0]}', which is checked there"
                )
                changed = True
    for check in checks:
        if check.kind.counts_only_with_work() and check.name not in later:
            supporters = judges(check, [c for c in checks if not c.hidden])
            if supporters and all(c.name in later for c in supporters):
                names = " or ".join(c.name for c in supporters)
                later[check.name] = Later(
                    check.name, check.points, True, f"it counts only when {names} passes, checked there"
                )
    return later


def score_here(task: Task) -> float:
    """The most a submission scores on ``task`` here: in a kit, without the checks left to
    final grading (for a submission that cannot be graded at all, say)."""

    freeze = load_freeze(task)
    if freeze is None or not freeze.kit:
        return task.max_score
    later = in_a_kit(task.checks)
    return task.max_score - sum(l.points for l in later.values())


def not_run(check: CheckSpec, later: Later) -> CheckResult:
    """The line of a check the kit does not run."""
    return CheckResult(
        check.name,
        SKIPPED,
        0.0,
        0.0,
        description=check.description,
        message=f"checked at final grading ({_points(later.points)}, not in this kit's score): {later.why}",
        reason=FINAL_GRADING,
        function=check.call,
        final_points=later.points,
    )


def decided_later(result: CheckResult, later: Later) -> CheckResult:
    """The line of a check the kit runs but whose points final grading decides."""
    verb = "is" if later.points == 1 else "are"
    note = f"its {_points(later.points)} {verb} decided at final grading: {later.why}"
    message = f"{result.message.rstrip()} ({note})" if result.message else note[:1].upper() + note[1:]
    return dataclasses.replace(result, score=0.0, max_score=0.0, message=message, final_points=later.points)


def header_lines(later: dict[str, Later]) -> list[str]:
    """What the kit's task.yaml says of them, as comment lines."""
    if not later:
        return []
    waiting = [l for l in later.values() if not l.runs]
    running = [l for l in later.values() if l.runs]
    text = (
        "Checked at final grading only, not in this kit's score (this kit holds nothing of "
        "what they compare with): " + ", ".join(f"{l.name} ({_points(l.points)})" for l in waiting) + "."
    )
    if running:
        text += (
            " Run here, but their points are decided at final grading (they count only "
            "when those pass): " + ", ".join(f"{l.name} ({_points(l.points)})" for l in running) + "."
        )
    return ["# " + line for line in textwrap.wrap(text, 88)]
