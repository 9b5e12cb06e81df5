"""A class at a glance, computed from stored reports (plain data in, plain data out), and
the JSON-lines file of the full reports (the CSV files are grade_files.py's).

Student ids and failure messages are student text: in summary-<task>.md each is escaped so
it can open no heading, list, table cell, link, HTML tag or comment (``for_markdown``)."""
from __future__ import annotations

import json
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field

from .result import ERROR, FAILED, PASSED, CheckResult, Result
from .statuses import TIMED_OUT
from .student_text import clean_report, for_markdown

# Reports stored before checks had a reason: a timeout is known by launcher.py's words.
LEGACY_TIMED_OUT = ("did not finish within", "time budget")
BUCKETS = 10


@dataclass
class ClassSummary:
    task: str
    students: int
    mean_percent: float
    median_percent: float
    distribution: list[int]                  # students per 10% band, 0-10% ... 90-100%
    pass_rates: dict[str, float]             # check -> share of students who passed it
    common_failures: list[tuple[int, str, str]] = field(default_factory=list)  # count, check, message
    errored: list[str] = field(default_factory=list)
    timed_out: list[str] = field(default_factory=list)


def _percent(report: Result) -> float:
    return 100.0 * report.score / report.max_score if report.max_score else 100.0


def _timed_out(check: CheckResult, stored: dict) -> bool:
    if "reason" in stored:
        return check.reason in TIMED_OUT
    return any(words in check.message for words in LEGACY_TIMED_OUT)


def _shape_of(message: str) -> str:
    """Failure messages that differ only in numbers are the same failure."""
    return re.sub(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", "#", message)[:160]


def summarize(task: str, stored: list[tuple[str, dict]]) -> ClassSummary:
    reports = [(student, Result.from_dict(report)) for student, report in stored]
    percents = [_percent(r) for _, r in reports] or [0.0]
    distribution = [0] * BUCKETS
    for p in percents if reports else []:
        distribution[min(int(p // (100 / BUCKETS)), BUCKETS - 1)] += 1
    checks: dict[str, list[bool]] = {}
    failures: Counter = Counter()
    errored, timed_out = [], []
    for (student, report), (_, raw) in zip(reports, stored):
        if report.status == ERROR:
            errored.append(student)
        if any(_timed_out(c, r) for c, r in zip(report.checks, raw.get("checks", []))):
            timed_out.append(student)
        for check in report.checks:
            if not check.max_score:
                continue
            checks.setdefault(check.name, []).append(check.status == PASSED)
            if check.status in (FAILED, ERROR) and check.message:
                failures[(check.name, _shape_of(check.message))] += 1
    return ClassSummary(
        task=task, students=len(reports), mean_percent=statistics.fmean(percents),
        median_percent=statistics.median(percents), distribution=distribution,
        pass_rates={name: sum(v) / len(v) for name, v in checks.items()},
        common_failures=[(n, c, m) for (c, m), n in failures.most_common(10)],
        errored=errored, timed_out=timed_out)


def _names(students: list[str]) -> str:
    return ", ".join(for_markdown(s, 1024) for s in students) or "none"


def render_markdown(summary: ClassSummary) -> str:
    lines = [f"# {for_markdown(summary.task)}: {summary.students} submissions", "",
             f"Mean {summary.mean_percent:.0f}%, median {summary.median_percent:.0f}%.", "",
             "## Score distribution", "", "| score | students |", "| --- | --- |"]
    width = 100 // BUCKETS
    lines += [f"| {i * width}-{(i + 1) * width}% | {n} {'#' * n} |"
              for i, n in enumerate(summary.distribution)]
    lines += ["", "## Pass rate per check", "", "| check | passed |", "| --- | --- |"]
    lines += [f"| {for_markdown(name)} | {rate:.0%} |" for name, rate in summary.pass_rates.items()]
    lines += ["", "## Most common failures", ""]
    lines += [f"- {n} x **{for_markdown(check)}**: {for_markdown(message)}"
              for n, check, message in summary.common_failures] or ["- none"]
    lines += ["", "## Errored (nothing could be graded)", "", _names(summary.errored), "",
              "## Timed out somewhere", "", _names(summary.timed_out)]
    return "\n".join(lines) + "\n"


def write_jsonl(path: str, reports: list[tuple[str, dict]]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for student, report in reports:
            f.write(json.dumps(clean_report({"student": student, **report}), ensure_ascii=False) + "\n")
