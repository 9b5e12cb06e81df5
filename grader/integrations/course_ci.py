"""``grader ci``: grade a course repository on every push.

Layout (see examples/course/):

    tasks/<task id>/          task.yaml, reference.py, statement.md
    solutions/<task id>.py    the student's solution: a hand-in file (.py, .ipynb: the formats
                              of submission/formats.py, the suffix in any case), or
                              solutions/<task id>/ holding one

Every task is graded against its solution; a missing solution scores 0. The command prints
a summary (each task's score, then why it lost points: every failed check's name, message and
failing input), writes JUnit XML (--junit) and a Markdown summary (--summary, or GitHub's
$GITHUB_STEP_SUMMARY), prints GitHub error annotations for failed checks when run in
GitHub Actions (report/github.py: escaped, workspace-relative, capped), and exits 1 below
--min-score percent of all points. CI logs are seen by
students, so hidden checks are redacted here too. Messages are student text: escaped for
Markdown in the summary (student_text.for_markdown) and for workflow commands in the
annotations.
"""

from __future__ import annotations

import dataclasses
import os
import sys

from grader.authoring import load_task
from grader.grading import GradeOptions, for_students, grade, score_here
from grader.records.result import ERROR, FAILED, PASSED, Result, ungradable
from grader.records.wording import final_grading_summary
from grader.report import github
from grader.report.junit import render_many
from grader.student_text import for_markdown, for_markdown_code, visible
from grader.submission.file import SubmissionError, hand_ins_for
from grader.submission.formats import DEFAULT, named_each_way
from grader.task.spec import SpecError, Task


def find_tasks(root: str) -> list[Task]:
    folder = os.path.join(root, "tasks")
    if not os.path.isdir(folder):
        raise SpecError(
            [
                f"{folder}: missing. A course repository keeps its exercises in "
                "tasks/<task id>/ (see docs/integrations.md: Course repository CI)."
            ]
        )
    names = sorted(n for n in os.listdir(folder) if os.path.isfile(os.path.join(folder, n, "task.yaml")))
    if not names:
        raise SpecError([f"{folder}: holds no task (a folder with a task.yaml)."])
    return [load_task(os.path.join(folder, n)) for n in names]


def solution_for(root: str, task: Task) -> str | None:
    """solutions/<task id> with a hand-in suffix (in any case), or solutions/<task id>/;
    listed, never followed (a link is refused when it is read). SubmissionError when
    there are two."""
    folder = os.path.join(root, "solutions")
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return None
    found = hand_ins_for(task.id, names)
    if len(found) > 1:
        raise SubmissionError(
            f"two solutions for {task.id}: {' and '.join(found)} in {folder}; keep one of them."
        )
    return os.path.join(folder, found[0]) if found else None


def _missing(task: Task, root: str, reason: str, path: str | None = None) -> Result:
    return ungradable(
        task.id,
        task.version,
        score_here(task),
        path or os.path.join(root, "solutions", task.id + DEFAULT.suffixes[0]),
        reason,
    )


def grade_course(root: str, options: GradeOptions) -> list[Result]:
    results = []
    for task in find_tasks(root):
        try:
            path = solution_for(root, task)
        except SubmissionError as exc:
            results.append(_missing(task, root, str(exc)))
            continue
        if path is None:
            results.append(_missing(task, root, f"no solution: add {named_each_way(f'solutions/{task.id}')}"))
            continue
        # A task with hidden checks holds what the student must not see: grading it is
        # grading someone else's work, never in the rlimits tier.
        task_options = dataclasses.replace(
            options, others_work=options.others_work or any(c.hidden for c in task.checks)
        )
        try:
            results.append(for_students(grade(task, path, task_options)))
        except SubmissionError as exc:
            results.append(_missing(task, root, str(exc), path))  # (the file it refused)
    return results


def markdown(results: list[Result], percent: float, min_score: float) -> str:
    verdict = "passed" if percent >= min_score else "below the required"
    lines = [
        f"## Grades: {percent:.0f}% ({verdict} {min_score:g}%)",
        "",
        "| task | score | status |",
        "| --- | --- | --- |",
    ]
    lines += [
        f"| {for_markdown(r.task)} | {r.score:g}/{r.max_score:g} | {for_markdown(r.status)} |"
        for r in results
    ]
    later = [(r, final_grading_summary(r.checks)) for r in results if final_grading_summary(r.checks)]
    if later:
        lines += [""] + [f"- **{for_markdown(r.task)}**: {for_markdown(words)}." for r, words in later]
    failures = [(r, c) for r in results for c in r.checks if c.status in (FAILED, ERROR)]
    if failures:
        lines += ["", "### What to fix", ""]
        for result, check in failures:
            where = f" — {for_markdown_code(check.failing_input)}" if check.failing_input else ""
            lines.append(
                f"- **{for_markdown(result.task)} / {for_markdown(check.name)}**{where}: "
                f"{for_markdown(check.message)}"
            )
    return "\n".join(lines) + "\n"


def reasons(result: Result) -> list[str]:
    """Why a task lost points, for the log: the likely cause of a known mistake first, then
    each failed check's name and message (and the input it failed on), one line each, as ``grader check`` shows them to students (the
    results are already redacted: a hidden check says only that it failed)."""
    lines = [
        visible(f"      likely cause: {d.explanation} (explains {', '.join(d.checks)})")
        for d in result.diagnoses
    ]
    for check in result.checks:
        if check.status not in (FAILED, ERROR):
            continue
        lines.append(visible(f"      {check.name}: {check.message or check.status}"))
        if check.failing_input:
            lines.append(visible(f"        failing input: {check.failing_input}"))
    if later := final_grading_summary(result.checks):  # (a kit: the checks it cannot decide)
        lines.append(visible(f"      {later}"))
    return lines


def run_ci(
    root: str, min_score: float, junit_path: str | None, summary_path: str | None, options: GradeOptions
) -> int:
    results = grade_course(root, options)
    for note in sorted({r.isolation_note for r in results if r.isolation_note}):
        print(f"grader: note: {note}", file=sys.stderr)
    total = sum(r.score for r in results)
    maximum = sum(r.max_score for r in results)
    percent = 100.0 * total / maximum if maximum else 100.0
    width = max(len(r.task) for r in results)
    for r in results:
        mark = "ok  " if r.status == PASSED else "FAIL"
        print(visible(f"{mark}  {r.task:<{width}}  {r.score:g}/{r.max_score:g}  {r.status}  ({r.isolation})"))
        for line in reasons(r):
            print(line)
    print(f"total {total:g}/{maximum:g} = {percent:.0f}% (required: {min_score:g}%)")
    if os.environ.get("GITHUB_ACTIONS") == "true":
        for line in github.annotations(results, github.workspace_of(root)):
            print(line)
    if junit_path:
        os.makedirs(os.path.dirname(os.path.abspath(junit_path)), exist_ok=True)
        with open(junit_path, "w", encoding="utf-8") as f:
            f.write(render_many(results, github.workspace_of(root)))
    summary_path = summary_path or os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_path:
        with open(summary_path, "a", encoding="utf-8") as f:  # GitHub expects appends
            f.write(markdown(results, percent, min_score))
    sys.stdout.flush()
    return 0 if percent >= min_score else 1
