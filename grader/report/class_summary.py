"""A class at a glance, computed from stored reports (plain data in, plain data out), and
the JSON-lines file of the full reports (the CSV files are grade_files.py's).

The most common failures are counted per check, in words made from each failure's reason
(statuses.Reason; for a mismatch, what the check's kind says it means), never from the
student's message: "exponent-2i-over-d failed for 12 students (the values differ from the
reference)". Reports stored before checks had a reason are counted by their status, in
words (never by their message, which names files and paths).

Student ids and failure messages are student text: in summary-<task>.md each is escaped so
it can open no heading, list, table cell, link, HTML tag or comment (``for_markdown``); in
the plain text a terminal is shown (``render_text``) each is one line with its control
characters made visible (``line``), and nothing else escaped."""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from grader.records.result import ERROR, FAILED, PASSED, UNGRADABLE_CHECK, CheckResult, Result
from grader.records.statuses import MISMATCH, TIMED_OUT, Reason
from grader.records.wording import counted
from grader.student_text import clean_report, for_markdown, line

# Reports stored before checks had a reason: a timeout is known by launcher.py's words.
LEGACY_TIMED_OUT = ("did not finish within", "time budget")
BUCKETS = 10
FAILURES_SHOWN = 10
NO_MISTAKES = "none (no failure matched a mistake the task declares)"

# Why a check failed, as the end of "... failed for N students (...)".
REASON_WORDS: dict[Reason, str] = {
    "mismatch": "what it produced is not what the check asks for",
    "raised": "the code raised an exception",
    "timeout": "a call ran out of time",
    "budget": "the submission's time budget ran out",
    "crashed": "the code crashed its worker process",
    "malformed": "the worker's answer could not be read",
    "unverified": "a pass that could not be trusted (the file reaches the grader's code)",
    "imports": "the file imports what the task does not allow",
    "undefined": "a function the task asks for is missing",
    "unreadable": "Python could not read the file",
    "environment": "the grading machine lacks a package the task allows",
    "task": "the task's reference failed (a task bug)",
    "judge": "the check could not judge what the code produced",
    "ungradable": "the submission could not be graded",
    "typed-in": "the values are typed into the file, not computed",
    "final-grading": "checked at final grading only (a student kit)",
}


def how_many_students(count: int) -> str:
    """'1 student', '31 students'."""
    return counted(count, "student")


@dataclass
class CommonFailure:
    check: str
    students: int  # how many students failed it
    reasons: list[tuple[str, int]]  # (why, in words; how many of them), most first

    def sentence(self, escape: Callable[[str], str] = for_markdown, emphasis: str = "**{}**") -> str:
        """'**check** failed for 3 students (why)', the parts escaped for the medium
        (Markdown by default; the class page passes HTML's escape and emphasis)."""
        who = how_many_students(self.students)
        if len(self.reasons) == 1:
            why = f" ({escape(self.reasons[0][0])})"
        else:
            why = ": " + ", ".join(f"{n} ({escape(words)})" for words, n in self.reasons)
        return f"{emphasis.format(escape(self.check))} failed for {who}{why}"


@dataclass
class MistakeCount:
    mistake: str  # the task's name for a known mistake (result.Diagnosis)
    explanation: str
    students: int  # how many students' outputs it was diagnosed in

    def sentence(self, escape: Callable[[str], str] = for_markdown, emphasis: str = "**{}**") -> str:
        """'**31 students**: sin-cos-swapped (explanation)', the parts escaped for the
        medium (Markdown by default)."""
        who = emphasis.format(how_many_students(self.students))
        return f"{who}: {escape(self.mistake)} ({escape(self.explanation)})"


@dataclass
class ClassSummary:
    task: str
    students: int
    mean_percent: float
    median_percent: float
    distribution: list[int]  # students per 10% band, 0-10% ... 90-100%
    # check -> share of all the students who passed it: an errored student (nothing of the
    # file could be graded) is in every check's denominator, as not passing (PASS_RATE_WORDS)
    pass_rates: dict[str, float]
    common_failures: list[CommonFailure] = field(default_factory=list)  # most students first
    errored: list[str] = field(default_factory=list)
    timed_out: list[str] = field(default_factory=list)
    mistakes: list[MistakeCount] = field(default_factory=list)  # diagnosed, most students first


def _percent(report: Result) -> float:
    return 100.0 * report.score / report.max_score if report.max_score else 100.0


def _timed_out(check: CheckResult) -> bool:
    if not check.lacked("reason"):
        return check.reason in TIMED_OUT
    # (a row stored before checks had a reason: Result.from_dict remembers what it lacked)
    return any(words in check.message for words in LEGACY_TIMED_OUT)


# Reports stored before checks had a reason: their status in words (their messages name
# files, paths and numbers, which are no sentence about the class).
LEGACY_WORDS = {
    FAILED: "it failed; the report, from an older grader, does not say why",
    ERROR: "it could not be run; the report, from an older grader, does not say why",
}


def _why(check: CheckResult, mismatch: dict[str, str]) -> str:
    if check.reason is None:  # stored before checks had a reason
        return LEGACY_WORDS.get(check.status, check.status)
    if check.reason == MISMATCH:
        return mismatch.get(check.name, REASON_WORDS[MISMATCH])
    return REASON_WORDS.get(check.reason, check.reason)


def summarize(
    task: str, reports: list[tuple[str, Result]], mismatch: dict[str, str] | None = None
) -> ClassSummary:
    """``reports``: (student, report), as the gradebook reads them back (Result.from_dict).
    ``mismatch``: for each check, what its failing with reason "mismatch" means
    (mismatch_words); without it, generic words."""
    mismatch = mismatch or {}
    percents = [_percent(r) for _, r in reports] or [0.0]
    distribution = [0] * BUCKETS
    for p in percents if reports else []:
        distribution[min(int(p // (100 / BUCKETS)), BUCKETS - 1)] += 1
    checks: dict[str, list[bool]] = {}
    failures: dict[str, Counter[str]] = {}  # check -> why -> students
    errored: list[str] = []
    timed_out: list[str] = []
    diagnosed: Counter[str] = Counter()
    explanations: dict[str, str] = {}
    for student, report in reports:
        for diagnosis in report.diagnoses:
            diagnosed[diagnosis.mistake] += 1
            explanations.setdefault(diagnosis.mistake, diagnosis.explanation)
        if report.status == ERROR:
            errored.append(student)
        if any(_timed_out(c) for c in report.checks):
            timed_out.append(student)
        for check in report.checks:
            if not check.max_score:
                continue
            if check.name != UNGRADABLE_CHECK:  # no check: its students are listed as errored
                checks.setdefault(check.name, []).append(check.status == PASSED)
            if check.status in (FAILED, ERROR):
                failures.setdefault(check.name, Counter())[_why(check, mismatch)] += 1
    for _student, report in reports:
        if report.status == ERROR:  # a check it has no line for (a missing file's) did not pass
            have = {c.name for c in report.checks}
            for name, passed in checks.items():
                if name not in have:
                    passed.append(False)
    return ClassSummary(
        task=task,
        students=len(reports),
        mean_percent=statistics.fmean(percents),
        median_percent=statistics.median(percents),
        distribution=distribution,
        pass_rates={name: sum(v) / len(v) for name, v in checks.items()},
        common_failures=_most_common(failures),
        errored=errored,
        timed_out=timed_out,
        mistakes=[MistakeCount(name, explanations[name], n) for name, n in diagnosed.most_common()],
    )


def pass_rate_words(summary: ClassSummary) -> str:
    """What a pass rate is a share of, in words (every rendering of the summary says it)."""
    words = f"The share of all {counted(summary.students, 'submission')} that passed each check"
    if summary.errored:
        n = len(summary.errored)
        words += (
            f"; the {counted(n, 'errored submission')} (nothing could be graded) "
            f"count{'s' if n == 1 else ''} as not passing"
        )
    return words + "."


def _most_common(failures: dict[str, Counter[str]]) -> list[CommonFailure]:
    ranked = sorted(failures.items(), key=lambda item: -sum(item[1].values()))  # (stable: task order)
    return [
        CommonFailure(check, sum(why.values()), why.most_common()) for check, why in ranked[:FAILURES_SHOWN]
    ]


def _names(students: list[str], escape: Callable[[str, int], str] = for_markdown) -> str:
    return ", ".join(escape(s, 1024) for s in students) or "none"


def render_markdown(summary: ClassSummary) -> str:
    lines = [
        f"# {for_markdown(summary.task)}: {counted(summary.students, 'submission')}",
        "",
        f"Mean {summary.mean_percent:.0f}%, median {summary.median_percent:.0f}%.",
        "",
        "## Score distribution",
        "",
        "| score | students |",
        "| --- | --- |",
    ]
    width = 100 // BUCKETS
    lines += [
        f"| {i * width}-{(i + 1) * width}% | {n} {'#' * n} |" for i, n in enumerate(summary.distribution)
    ]
    lines += [
        "",
        "## Pass rate per check",
        "",
        pass_rate_words(summary),
        "",
        "| check | passed |",
        "| --- | --- |",
    ]
    lines += [f"| {for_markdown(name)} | {rate:.0%} |" for name, rate in summary.pass_rates.items()]
    lines += ["", "## Most common failures", ""]
    lines += [f"- {failure.sentence()}" for failure in summary.common_failures] or ["- none"]
    lines += ["", "## Diagnosed mistakes", ""]
    lines += [f"- {m.sentence()}" for m in summary.mistakes] or [f"- {NO_MISTAKES}"]
    lines += [
        "",
        "## Errored (nothing could be graded)",
        "",
        _names(summary.errored),
        "",
        "## Timed out somewhere",
        "",
        _names(summary.timed_out),
    ]
    return "\n".join(lines) + "\n"


def _plain(text: str) -> str:
    return line(text, 400)


def render_text(summary: ClassSummary) -> str:
    """The summary as plain text for a terminal: what render_markdown says, without markup
    or Markdown's escapes; student text on one line each, its control characters shown."""
    width = 100 // BUCKETS
    name_width = max((len(_plain(name)) for name in summary.pass_rates), default=0)
    lines = [
        f"{_plain(summary.task)}: {counted(summary.students, 'submission')}",
        f"Mean {summary.mean_percent:.0f}%, median {summary.median_percent:.0f}%.",
        "",
        "Score distribution (students)",
    ]
    lines += [
        f"  {f'{i * width}-{(i + 1) * width}%':>8} {n:>4} {'#' * n}".rstrip()
        for i, n in enumerate(summary.distribution)
    ]
    lines += ["", "Pass rate per check", f"  ({pass_rate_words(summary)})"]
    lines += [f"  {_plain(name):<{name_width}}  {rate:>4.0%}" for name, rate in summary.pass_rates.items()]
    lines += ["", "Most common failures"]
    lines += [f"- {f.sentence(_plain, '{}')}" for f in summary.common_failures] or ["- none"]
    lines += ["", "Diagnosed mistakes"]
    lines += [f"- {m.sentence(_plain, '{}')}" for m in summary.mistakes] or [f"- {NO_MISTAKES}"]
    lines += ["", "Errored (nothing could be graded)", "  " + _names(summary.errored, line)]
    lines += ["", "Timed out somewhere", "  " + _names(summary.timed_out, line)]
    return "\n".join(lines) + "\n"


def write_jsonl(path: str, reports: list[tuple[str, Result]]) -> None:
    """One line a report, ``student`` first; a report read back is written as it was read
    (Result.to_dict), an older grader's row too."""
    with open(path, "w", encoding="utf-8") as f:
        for student, report in reports:
            row = {"student": student, **report.to_dict()}
            f.write(json.dumps(clean_report(row), ensure_ascii=False) + "\n")
