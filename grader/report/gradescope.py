"""Gradescope's results.json (autograder specification): one test per check.

Only the specification's keys (the total is the sum of the tests' max_score: there is no
top-level max_score); every text is "text" format, so a printed ``<class 'numpy.ndarray'>``
shows as written instead of being read as HTML."""

from __future__ import annotations

import json

from grader.records.result import PASSED, UNSANDBOXED, Result
from grader.report.text import check_details
from grader.student_text import clean_report

TEXT_FORMATS = {"output_format": "text", "test_output_format": "text", "test_name_format": "text"}


def render(result: Result, **_options: object) -> str:
    tests: list[dict] = []
    for check in result.checks:
        if not check.max_score and check.status == PASSED:
            continue  # the 0-point 'loads'/'runs' line matters only when it fails
        tests.append(
            {
                "name": f"{check.name}: {check.description}" if check.description else check.name,
                "number": str(len(tests) + 1),
                "score": check.score,
                "max_score": check.max_score,
                "status": "passed" if check.status == PASSED else "failed",  # all Gradescope knows
                "output": "\n".join(check_details(check)),
                "visibility": "visible",
            }
        )
    where = "unsandboxed" if result.isolation == UNSANDBOXED else f"in the {result.isolation} sandbox"
    summary = f"{result.task}: {result.score:g}/{result.max_score:g} ({result.status}); graded {where}."
    if result.isolation_note:
        summary += f" ({result.isolation_note})"
    for diagnosis in result.diagnoses:
        summary += f"\n\nLikely cause: {diagnosis.explanation} (explains {', '.join(diagnosis.checks)})"
    if result.output.strip():
        summary += "\n\nYour file printed:\n" + result.output
    return (
        json.dumps(
            clean_report(
                {
                    "score": result.score,
                    "execution_time": round(result.seconds, 3),
                    "output": summary,
                    **TEXT_FORMATS,
                    "visibility": "visible",
                    "stdout_visibility": "hidden",
                    "tests": tests,
                }
            ),
            indent=2,
            ensure_ascii=False,
        )
        + "\n"
    )


def cannot_grade(reason: str) -> str:
    """results.json for a submission that could not be graded at all."""
    return (
        json.dumps(
            clean_report(
                {
                    "score": 0.0,
                    "output": f"Your submission could not be graded: {reason}",
                    **TEXT_FORMATS,
                    "visibility": "visible",
                    "tests": [],
                }
            ),
            indent=2,
        )
        + "\n"
    )
