"""How a kit's report names its checks decided at final grading (final_grading.py decides
which): text from a result's records alone, with no heavy import, so that the renderers (and
the command line's grammar, which lists them) load without numpy or the checks."""

from __future__ import annotations

from grader.records.result import CheckResult


def summary(checks: list[CheckResult]) -> str:
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


def points(points: float) -> str:
    return f"{points:g} point{'' if points == 1 else 's'}"
