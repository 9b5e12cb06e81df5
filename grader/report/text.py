"""The terminal report: one line per check, the failure details a student can act on."""
from __future__ import annotations

import os

from ..result import ERROR, FAILED, PASSED, SKIPPED, Result

_LABEL = {PASSED: "PASS", FAILED: "FAIL", ERROR: "ERR ", SKIPPED: "SKIP"}
_COLOUR = {PASSED: "32", FAILED: "31", ERROR: "35", SKIPPED: "33"}
OUTPUT_LINES_SHOWN = 12


def _paint(text: str, code: str, colour: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if colour else text


def _points(score: float, max_score: float) -> str:
    return f"{score:g}/{max_score:g}"


def check_details(check) -> list[str]:
    """The lines that explain one check's result (shared by the other text-bearing formats)."""
    detail = []
    if check.status in (FAILED, ERROR):
        if check.failing_input:
            detail.append(f"failing input: {check.failing_input}")
        if check.message:
            detail.append(check.message)
        if check.output:
            detail.append("your code printed:")
            detail += [f"  | {line}" for line in check.output.splitlines()[:OUTPUT_LINES_SHOWN]]
    elif check.message:
        detail.append(check.message)
    return detail


def render(result: Result, colour: bool = False, **_options) -> str:
    lines = [_paint(f"{result.task} · {os.path.basename(result.submission)}", "1", colour)
             + f"   (isolation: {result.isolation})", ""]
    width = max((len(c.name) for c in result.checks), default=10)
    previous_skip = None
    for check in result.checks:
        label = _paint(_LABEL[check.status], _COLOUR[check.status], colour)
        points = _points(check.score, check.max_score) if check.max_score else ""
        lines.append(f"  {label}  {check.name:<{width}}  {points:>7}  {check.description}".rstrip())
        if check.status == SKIPPED and check.message == previous_skip:
            continue  # the same reason as the line above: said once is enough
        previous_skip = check.message if check.status == SKIPPED else None
        lines += [f"        {d}" for d in check_details(check)]
    if result.output.strip():
        lines += ["", "Your file printed:"]
        lines += [f"  | {line}" for line in result.output.splitlines()[:OUTPUT_LINES_SHOWN]]
    percent = 100 * result.score / result.max_score if result.max_score else 0
    status = _paint(result.status, _COLOUR.get(result.status, "0"), colour)
    lines += ["", _paint(f"Score: {_points(result.score, result.max_score)} ({percent:.0f}%)", "1", colour)
              + f"  {status}"]
    return "\n".join(lines) + "\n"
