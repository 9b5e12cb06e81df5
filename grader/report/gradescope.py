"""Gradescope's results.json (autograder specification): one test per check.

Only the specification's keys (the total is the sum of the tests' max_score: there is no
top-level max_score); every text is "text" format, so a printed ``<class 'numpy.ndarray'>``
shows as written instead of being read as HTML.

What students see (the top-level output, the visible tests) is only what a student can act
on: the score, the likely cause, what the file printed, each check. How the grading machine
graded (its sandbox tier, why it is weaker than bubblewrap and how an operator would fix it)
is for instructors only: in ``extra_data`` and in a test of visibility "hidden".

A hidden check (``hidden: true``; redacted before any renderer runs, grading/redact.py) has
the visibility the task's ``hidden_visibility`` says ("after_due_date" unless it says
"after_published" or "hidden"); every other check is "visible"."""

from __future__ import annotations

import json

from grader.records.result import PASSED, Result
from grader.report.text import check_details
from grader.student_text import clean_report
from grader.task.spec import DEFAULT_HIDDEN_VISIBILITY, HIDDEN_VISIBILITIES

TEXT_FORMATS = {"output_format": "text", "test_output_format": "text", "test_name_format": "text"}
ENVIRONMENT_TEST = "Grading environment (instructors only)"


def environment(result: Result) -> dict[str, str]:
    """How this result was graded, for instructors and operators (never for students)."""
    return {
        "isolation": result.isolation,
        "isolation_note": result.isolation_note,
        "grader_version": result.grader_version,
        "cases_digest": result.cases_digest,
    }


def _environment_test(result: Result) -> dict:
    text = f"graded in the {result.isolation} sandbox tier (grader {result.grader_version or '?'})."
    if result.isolation_note:
        text += f"\n{result.isolation_note}"
    return {
        "name": ENVIRONMENT_TEST,
        "score": 0.0,
        "max_score": 0.0,
        "status": "passed",
        "output": text,
        "visibility": "hidden",
    }


def render(result: Result, hidden_visibility: object = DEFAULT_HIDDEN_VISIBILITY, **_options: object) -> str:
    """``hidden_visibility``: the task's (Task.hidden_visibility), for its hidden checks."""
    if hidden_visibility not in HIDDEN_VISIBILITIES:
        raise ValueError(f"hidden_visibility {hidden_visibility!r} is not one of {HIDDEN_VISIBILITIES}")
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
                "visibility": hidden_visibility if check.hidden else "visible",
            }
        )
    tests.append(_environment_test(result))
    summary = f"{result.task}: {result.score:g}/{result.max_score:g} ({result.status})"
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
                    "extra_data": environment(result),
                    "tests": tests,
                }
            ),
            indent=2,
            ensure_ascii=False,
        )
        + "\n"
    )


def cannot_grade(reason: str, task: str = "", max_score: float = 0.0) -> str:
    """results.json for a submission that could not be graded at all (no file, a link, too
    large...): 0 of the task's ``max_score``, in one visible test that says why."""
    return (
        json.dumps(
            clean_report(
                {
                    "score": 0.0,
                    "output": (f"{task}: 0/{max_score:g}\n" if task else "")
                    + f"Your submission could not be graded: {reason}",
                    **TEXT_FORMATS,
                    "visibility": "visible",
                    "tests": [
                        {
                            "name": "submission",
                            "score": 0.0,
                            "max_score": max_score,
                            "status": "failed",
                            "output": reason,
                            "visibility": "visible",
                        }
                    ],
                }
            ),
            indent=2,
        )
        + "\n"
    )
