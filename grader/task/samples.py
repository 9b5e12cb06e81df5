"""Sample submissions declare the verdict they should get, in a comment near the top:

    # expect: full marks
    # expect: fails sin-even-cos-odd, positions-start-at-zero
    # expect: error

``fails`` lists checks that must not pass (the file may lose points elsewhere too);
``error`` means nothing can be graded (e.g. the file does not import). The declaration is
read as text; the sample is only ever run in the sandbox. A notebook sample declares it in
its first code or markdown cell (a markdown heading ``# expect: full marks`` reads the same).

A sample of a task with known mistakes also declares the ones it is diagnosed with, the
same way (``# diagnosis: sin-cos-swapped``; several, comma-separated); a sample without
that line must get no diagnosis.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from grader.records.result import ERROR, PASSED, Result
from grader.submission.file import source_stem
from grader.submission.formats import format_of
from grader.submission.source_map import location_text

_DECLARATION = re.compile(r"^\s*#\s*expect:\s*(.+?)\s*$")
_DIAGNOSIS = re.compile(r"^\s*#\s*diagnosis:\s*(.*?)\s*$")
HEAD_LINES = 30


@dataclass(frozen=True)
class Expectation:
    verdict: str  # full marks | fails | error
    checks: tuple[str, ...] = ()
    line: int = 0


def _head(path: str) -> tuple[int | None, list[str]]:
    """Where a declaration may be: a file's first lines, or a notebook's first code or
    markdown cell (its number, and its first lines)."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        cell, text = format_of(path).head(data)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    return cell, text.splitlines()[:HEAD_LINES]


def read_expectation(path: str) -> Expectation | None:
    cell, lines = _head(path)
    for number, line in enumerate(lines, start=1):
        match = _DECLARATION.match(line)
        if not match:
            continue
        text = match.group(1)
        if text == "full marks":
            return Expectation("full marks", line=number)
        if text == "error":
            return Expectation("error", line=number)
        if text.startswith("fails "):
            names = tuple(n.strip() for n in text[len("fails ") :].split(",") if n.strip())
            return Expectation("fails", names, number)
        where = f"{path}:{number}" if cell is None else f"{path}: {location_text(cell, number)}"
        raise ValueError(
            f"{where}: '# expect: {text}' is not understood. Write "
            "'full marks', 'error' or 'fails CHECK[, CHECK...]'."
        )
    return None


def read_diagnosis(path: str) -> tuple[str, ...]:
    """The mistakes a sample declares it is diagnosed with; () without the line."""
    _cell, lines = _head(path)
    for line in lines:
        match = _DIAGNOSIS.match(line)
        if match:
            return tuple(n.strip() for n in match.group(1).split(",") if n.strip())
    return ()


def diagnosis_mismatch(declared: tuple[str, ...], result: Result, mistake_names: set[str]) -> str | None:
    """Why the result's diagnoses are not the ones the sample declares, or None."""
    unknown = [n for n in declared if n not in mistake_names]
    if unknown:
        return (
            f"declares '# diagnosis: {', '.join(unknown)}', which the task's mistakes: do not "
            f"name (it has: {', '.join(sorted(mistake_names)) or 'none'})"
        )
    got = [d.mistake for d in result.diagnoses]
    if set(got) == set(declared):
        return None
    if not declared:
        return (
            f"diagnosed with {', '.join(got)} but declares no diagnosis: a wrong diagnosis "
            "of this file, or add '# diagnosis: ...' near the top"
        )
    return f"declared diagnosis {', '.join(declared)} but got {', '.join(got) or 'none'}"


def mismatch(expectation: Expectation, result: Result, check_names: set[str]) -> str | None:
    """Why the result does not match what the sample declares, or None when it does."""
    if expectation.verdict == "full marks":
        if result.status == PASSED:
            return None
        lost = [c.name for c in result.checks if c.status != PASSED and c.max_score]
        return (
            f"declared full marks but scored {result.score:g}/{result.max_score:g} (lost: {', '.join(lost)})"
        )
    if expectation.verdict == "error":
        return None if result.status == ERROR else f"declared error but the status is {result.status}"
    unknown = [n for n in expectation.checks if n not in check_names]
    if unknown:
        return f"declares checks that the task does not have: {', '.join(unknown)}"
    status = {c.name: c.status for c in result.checks}
    still_passing = [n for n in expectation.checks if status.get(n) == PASSED]
    if still_passing:
        return f"declared to fail {', '.join(still_passing)}, but passed"
    if result.status == PASSED:
        return "declared to lose points but got full marks"
    return None


def sample_files(folder: str) -> list[str]:
    if not os.path.isdir(folder):
        return []
    return sorted(os.path.join(folder, name) for name in os.listdir(folder) if source_stem(name) is not None)
