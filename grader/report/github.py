"""GitHub Actions annotations: workflow commands (``::error file=...,line=...::message``) for
the failed checks of a course run, as GitHub shows them on the student's lines.

Three rules of the runner shape this module:

- a command's properties and data are escaped as the Actions toolkit does
  (student_text.for_workflow_property / for_workflow_data), so a file name holding ``,`` or
  ``:`` cannot end ``file=`` early, nor a message forge a second command;
- ``file=`` is relative to the workspace ($GITHUB_WORKSPACE: the checked-out repository),
  or GitHub cannot link it to the code;
- GitHub shows at most 10 error and 10 warning annotations per step and drops the rest
  without a word, so at most ``LIMIT`` of each level are printed, then one notice saying how
  many more there are and that the step summary lists them all.
"""
# (no `from __future__ import annotations`: this module defines a function of that name)

import os

from grader.records.result import ERROR, FAILED, CheckResult, Result
from grader.student_text import for_workflow_data, for_workflow_property
from grader.submission.formats import format_of

LIMIT = 10  # annotations of one level (error, warning) GitHub shows per step


def workflow_command(name: str, message: str, **properties: object) -> str:
    """One workflow command (``name``: error, notice); properties that are None are left out."""
    props = ",".join(
        f"{key}={for_workflow_property(str(value))}" for key, value in properties.items() if value is not None
    )
    return f"::{name}{' ' + props if props else ''}::{for_workflow_data(message)}"


def workspace_of(root: str) -> str:
    """What GitHub resolves ``file=`` against: $GITHUB_WORKSPACE when set, else the git
    repository holding ``root`` (where a local run mirrors the checkout), else ``root``."""
    if os.environ.get("GITHUB_WORKSPACE"):
        return os.environ["GITHUB_WORKSPACE"]
    folder = os.path.realpath(root)
    while True:
        if os.path.exists(os.path.join(folder, ".git")):  # a folder, or a file in a worktree
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return root
        folder = parent


def relative_path(path: str, workspace: str) -> str | None:
    """``path`` relative to the workspace, with ``/``; None when it lies outside (GitHub
    could not link it)."""
    relative = os.path.relpath(os.path.realpath(path), os.path.realpath(workspace))
    if relative == ".." or relative.startswith(".." + os.sep) or os.path.isabs(relative):
        return None
    return relative.replace(os.sep, "/")


def failure_line(result: Result, check: CheckResult) -> int | None:
    """The line a failure points at: where the student's code raised, else where the
    function it calls is defined (found by the grader's scan of the file, never parsed
    here: a renderer only renders). None in a notebook: a line of its JSON is no place in
    its code, so the file is named without a line (the message says the cell and line)."""
    if check.cell is not None or not format_of(result.submission).file_lines:
        return None
    return check.line or result.definitions.get(check.function or "", 1)


def annotations(results: list[Result], workspace: str) -> list[str]:
    """Error annotations for every failed check, capped at GitHub's limit, then a notice."""
    errors = []
    for result in results:
        file = relative_path(result.submission, workspace)
        causes = {d.mistake: d.explanation for d in result.diagnoses}
        for check in result.checks:
            if check.status not in (FAILED, ERROR):
                continue
            message = check.message + (
                f" Failing input: {check.failing_input}" if check.failing_input else ""
            )
            if check.mistake in causes:
                message += f" Likely cause: {causes[check.mistake]}"
            errors.append(
                workflow_command(
                    "error",
                    message,
                    file=file,
                    line=failure_line(result, check) if file else None,
                    title=f"{result.task}: {check.name}",
                )
            )
    lines = errors[:LIMIT]
    if len(errors) > LIMIT:
        more = len(errors) - LIMIT
        lines.append(
            workflow_command(
                "notice",
                f"{more} more failed check{'s' if more > 1 else ''} "
                "not annotated here (GitHub shows 10 error annotations "
                "per step): the step summary of this run lists "
                "every one.",
                title=f"{more} more failed checks",
            )
        )
    return lines
