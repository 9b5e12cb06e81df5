"""Words every report says alike: a count ("1 check", "2 checks", "1 repository"), points,
and how a kit's report names its checks decided at final grading (which ones:
grading/final_grading.py): text from a result's records alone, with no heavy import, so that
the renderers and the command line's grammar load without numpy or the checks."""

from __future__ import annotations

from grader.records.result import CheckResult


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun``, plural unless the count is one (``plural`` where adding an
    "s" does not make it: counted(2, "repository", "repositories"))."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def points(points: float) -> str:
    """``points`` in words: "1 point", "2.5 points"."""
    return f"{points:g} point{'' if points == 1 else 's'}"


def final_grading_summary(checks: list[CheckResult]) -> str:
    """One sentence on a kit grade's checks decided at final grading ("" when none)."""
    waiting = [c for c in checks if c.final_points]
    if not waiting:
        return ""
    total = sum(c.final_points for c in waiting)
    names = ", ".join(f"{c.name} ({c.final_points:g})" for c in waiting)
    return (
        f"{points(total)} {'is' if total == 1 else 'are'} decided at final grading, "
        f"not in this kit's score: {names}"
    )
