"""The terminal report: one line per check, the failure details a student can act on.

Every piece of text from the result is shown through ``_shown``: a control character in it
(from a worker's answer, or an old gradebook) appears as ``\\x1b`` and the like, never as
itself, and text that spans lines is indented like the line it belongs to. The only escape
sequences written are this module's own colours."""

from __future__ import annotations

import os
import re

from grader.records.result import ERROR, FAILED, PASSED, SKIPPED, CheckResult, Result
from grader.records.wording import final_grading_summary
from grader.student_text import visible

_LABEL = {PASSED: "PASS", FAILED: "FAIL", ERROR: "ERR ", SKIPPED: "SKIP"}
_COLOUR = {PASSED: "32", FAILED: "31", ERROR: "35", SKIPPED: "33"}
OUTPUT_LINES_SHOWN = 12
# The mark the grader itself puts where it kept only the head and the tail of what a call
# printed (sandbox/worker_process.py): JSON and HTML show it in place; a report that shows
# fewer lines says the bytes it stood for in its own mark. (A submission can print such a
# line too: then it misstates only its own output's length, to its own author, as it does
# in JSON and HTML; nothing is scored from it.)
_GRADER_CUT = re.compile(r"\[\.\.\. (\d+) bytes not shown \.\.\.\]")


def _paint(text: str, code: str, colour: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if colour else text


def _shown(text: object) -> str:
    """One line of data as the terminal may show it."""
    return visible(text)


def _lines(text: object, indent: str) -> list[str]:
    """Text that may span lines, each line indented (nothing from data starts a line)."""
    return [indent + _shown(part) for part in str(text).splitlines() or [""]]


def printed_lines(output: str) -> list[str]:
    """The lines of printed output a text report shows: the first OUTPUT_LINES_SHOWN, then,
    when there were more, one line saying how many lines and bytes it did not show (and the
    bytes the grader had already left out, when it did)."""
    lines = output.splitlines()
    shown, rest = lines[:OUTPUT_LINES_SHOWN], lines[OUTPUT_LINES_SHOWN:]
    if not rest:
        return shown
    marks = [m for line in rest if (m := _GRADER_CUT.fullmatch(line))]
    kept = [line for line in rest if not _GRADER_CUT.fullmatch(line)]
    size = sum(len(line.encode("utf-8")) + 1 for line in kept)
    note = f"[... {len(kept):,} more line{'' if len(kept) == 1 else 's'} ({size:,} bytes) not shown here"
    if marks:
        note += f", and {sum(int(m.group(1)) for m in marks):,} bytes the grader did not keep"
    return [*shown, note + " ...]"]


def _points(score: float, max_score: float) -> str:
    return f"{score:g}/{max_score:g}"


def check_details(check: CheckResult) -> list[str]:
    """The lines that explain one check's result (shared by the other text-bearing formats)."""
    detail = []
    if check.status in (FAILED, ERROR):
        if check.failing_input:
            detail.append(f"failing input: {check.failing_input}")
        if check.message:
            detail.append(check.message)
        if check.output:
            detail.append("your code printed:")
            detail += [f"  | {line}" for line in printed_lines(check.output)]
    elif check.message:
        detail.append(check.message)
    return detail


def _check_lines(checks: list[CheckResult], width: int, colour: bool) -> list[str]:
    lines: list[str] = []
    previous_skip = None
    for check in checks:
        label = _paint(_LABEL[check.status], _COLOUR[check.status], colour)
        points = (
            _points(check.score, check.max_score)
            if check.max_score
            else f"{check.final_points:g} later"
            if check.final_points
            else ""
        )
        lines.append(
            f"  {label}  {_shown(check.name):<{width}}  {points:>7}  {_shown(check.description)}".rstrip()
        )
        if check.status == SKIPPED and check.message == previous_skip:
            continue  # the same reason as the line above: said once is enough
        previous_skip = check.message if check.status == SKIPPED else None
        lines += [shown for d in check_details(check) for shown in _lines(d, "        ")]
    return lines


def render(result: Result, colour: bool = False, **_options: object) -> str:
    lines = [
        _paint(_shown(f"{result.task} · {os.path.basename(result.submission)}"), "1", colour)
        + f"   (isolation: {_shown(result.isolation)})",
        "",
    ]
    if result.isolation_note:
        lines[-1:-1] = [f"note: {_shown(result.isolation_note)}"]
    if result.kit:
        lines[-1:-1] = [
            "note: graded on a student kit: the public checks only; hidden checks "
            "may be added at final grading."
        ]
        if later := final_grading_summary(result.checks):
            lines[-1:-1] = [f"note: {_shown(later)}."]
    width = max((len(_shown(c.name)) for c in result.checks), default=10)
    # each diagnosis once, first, with the checks it explains under it; the rest as ever
    explained = {d.mistake for d in result.diagnoses}
    for diagnosis in result.diagnoses:
        lines += _lines(f"Likely cause ({diagnosis.mistake}): {diagnosis.explanation}", "")
        lines += _check_lines([c for c in result.checks if c.mistake == diagnosis.mistake], width, colour)
        lines.append("")
    if result.diagnoses:
        lines.append("The other checks:")
    lines += _check_lines([c for c in result.checks if c.mistake not in explained], width, colour)
    if result.output.strip():
        lines += ["", "Your file printed:"]
        lines += [f"  | {_shown(line)}" for line in printed_lines(result.output)]
    percent = 100 * result.score / result.max_score if result.max_score else 0
    status = _paint(_shown(result.status), _COLOUR.get(result.status, "0"), colour)
    lines += [
        "",
        _paint(f"Score: {_points(result.score, result.max_score)} ({percent:.0f}%)", "1", colour)
        + f"  {status}",
    ]
    if result.kit and (waiting := sum(c.final_points for c in result.checks)):
        lines[-1] += f"  (+{waiting:g} point{'' if waiting == 1 else 's'} decided at final grading)"
    return "\n".join(lines) + "\n"
