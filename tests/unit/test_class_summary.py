"""A class at a glance (summary-<task>.md), from stored reports: distribution, pass rates,
the most common failures (the same failure with other numbers counts once), who errored."""

import json

from grader.records.result import Result
from grader.report import class_summary
from grader.report.class_summary import render_markdown, render_text


def _read(rows):
    """Gradebook rows (student, report as stored) read back as the gradebook reads them."""
    return [(student, Result.from_dict(row)) for student, row in rows]


def summarize(task, rows, mismatch=None):
    return class_summary.summarize(task, _read(rows), mismatch)


def write_jsonl(path, rows):
    class_summary.write_jsonl(path, _read(rows))


def _report(score, checks, status=None):
    return {
        "task": "t",
        "submission": "s.py",
        "isolation": "bubblewrap",
        "score": score,
        "max_score": 4,
        "status": status or ("passed" if score == 4 else "failed"),
        "checks": [
            {"name": n, "status": s, "score": p if s == "passed" else 0, "max_score": p, "message": m}
            for n, s, p, m in checks
        ],
    }


REPORTS = [
    ("ann", _report(4, [("loads", "passed", 0, ""), ("a", "passed", 1, ""), ("b", "passed", 3, "")])),
    (
        "bob",
        _report(
            1,
            [
                ("loads", "passed", 0, ""),
                ("a", "passed", 1, ""),
                ("b", "failed", 3, "first difference at [3]: 1.5 != 2.5"),
            ],
        ),
    ),
    (
        "cy",
        _report(
            1,
            [
                ("loads", "passed", 0, ""),
                ("a", "passed", 1, ""),
                ("b", "failed", 3, "first difference at [7]: 0.25 != 9"),
            ],
        ),
    ),
    (
        "dee",
        _report(
            0,
            [
                ("loads", "error", 0, "SyntaxError"),
                ("a", "skipped", 1, "skipped"),
                ("b", "skipped", 3, "skipped"),
            ],
            status="error",
        ),
    ),
]


def test_scores_pass_rates_and_who_errored():
    summary = summarize("t", REPORTS)
    assert summary.students == 4
    assert summary.mean_percent == 37.5 and summary.median_percent == 25.0
    assert summary.distribution[0] == 1 and summary.distribution[2] == 2 and summary.distribution[9] == 1
    assert summary.pass_rates == {"a": 0.75, "b": 0.25}  # 0-point 'loads' is left out
    assert summary.errored == ["dee"]


def test_reports_stored_without_reasons_are_counted_by_status_in_words_never_mangled():
    """A report from before checks had a reason: its message names paths and numbers, which
    are no sentence (digits turned to '#' read "/tmp/rt#/class#/"): its status, in words."""
    [failure] = summarize("t", REPORTS).common_failures
    assert (failure.check, failure.students) == ("b", 2)
    assert failure.reasons == [("it failed; the report, from an older grader, does not say why", 2)]
    legacy = [
        (
            "ed",
            _report(
                0, [("submission", "error", 4, "/tmp/rt12/class1/ed: holds 2 .py files")], status="error"
            ),
        )
    ]
    summary = summarize("t", legacy)
    assert summary.common_failures[0].reasons == [
        ("it could not be run; the report, from an older grader, does not say why", 1)
    ]
    text = render_markdown(summary)
    assert "rt#" not in text and "tmp" not in text


def test_the_ungradable_line_is_no_check_in_the_pass_rates():
    """A file that could not be graded has one 'submission' line; its student is listed as
    errored, and the pass-rate table holds the task's checks only."""
    from grader.records.result import ungradable

    reports = REPORTS + [("eve", ungradable("t", "1", 4, "eve", "eve: is a folder").to_dict())]
    summary = summarize("t", reports)
    assert "submission" not in summary.pass_rates
    # eve errored (nothing graded) and counts as not passing each check, as dee does (issue 35)
    assert summary.pass_rates == {"a": 0.6, "b": 0.2}
    assert summary.errored == ["dee", "eve"]
    assert "| submission |" not in render_markdown(summary)


def _failed(name, reason, message="at [1, 2] expected 0.5, got 0.25", max_score=3):
    return {
        "name": name,
        "status": "failed",
        "score": 0,
        "max_score": max_score,
        "message": message,
        "reason": reason,
    }


def test_common_failures_are_counted_per_check_and_read_as_sentences():
    """Grouped by check, in words made from each failure's reason (for a mismatch, what the
    check's kind says it means), not from the students' messages."""
    from helpers.paths import PE_TASK

    from grader.authoring import load_task
    from grader.classroom.batch import mismatch_words

    words = mismatch_words(load_task(PE_TASK))
    assert words["exponent-2i-over-d"] == "the values differ from the reference"
    assert words["table-shape"] == "the result has the wrong shape"
    assert words["table-returns-float-array"] == "the result is of the wrong type"
    assert words["add-leaves-input-unchanged"] == "the function changed an argument in place or returned it"
    reports = [
        (
            f"s{i}",
            {
                **_report(1, []),
                "checks": [_failed("exponent-2i-over-d", "mismatch", f"at [{i}, 2] expected {i}.5, got 0")],
            },
        )
        for i in range(12)
    ]
    reports += [
        (
            "r",
            {
                **_report(1, []),
                "checks": [
                    _failed("table-shape", "raised", "raised ValueError"),
                    _failed("exponent-2i-over-d", "raised", "boom"),
                ],
            },
        ),
        ("m", {**_report(1, []), "checks": [_failed("table-shape", "mismatch", "returned shape (2, 2)")]}),
    ]
    summary = summarize("positional-encoding", reports, words)
    text = render_markdown(summary)
    assert (
        "- **exponent-2i-over-d** failed for 13 students: 12 (the values differ from the "
        "reference), 1 (the code raised an exception)"
    ) in text
    assert (
        "- **table-shape** failed for 2 students: 1 (the code raised an exception), "
        "1 (the result has the wrong shape)"
    ) in text
    assert "#" not in text.split("## Most common failures")[1].split("##")[0]
    only = summarize("t", [("a", {**_report(1, []), "checks": [_failed("c", "timeout")]})])
    assert only.common_failures[0].sentence() == "**c** failed for 1 student (a call ran out of time)"


def test_an_empty_class_summarizes_to_zero_students():
    summary = summarize("t", [])
    assert summary.students == 0 and summary.distribution == [0] * 10 and summary.errored == []
    assert "- none" in render_markdown(summary)


def test_a_class_of_one_is_one_submission():
    text = render_markdown(summarize("t", REPORTS[:1]))
    assert text.startswith("# t: 1 submission\n")


def test_markdown_escapes_what_students_wrote():
    reports = REPORTS + [
        ("<b>## x", _report(0, [("b", "failed", 3, "[x](javascript:1) | y")], status="error"))
    ]
    text = render_markdown(summarize("t", reports))
    assert text.startswith("# t: 5 submissions")
    assert "| b | 20% |" in text and "| a | 60% |" in text  # (errored: not passing a, its line lacking)
    assert "<b>" not in text and "\n## x" not in text and "](javascript" not in text
    assert "dee" in text.split("## Errored (nothing could be graded)")[1]


def test_jsonl_holds_one_full_report_per_line(tmp_path):
    path = tmp_path / "reports.jsonl"
    write_jsonl(str(path), REPORTS)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["student"] for r in rows] == ["ann", "bob", "cy", "dee"]
    assert rows[1]["checks"][2]["message"] == "first difference at [3]: 1.5 != 2.5"


def _diagnosed(report, *mistakes):
    return {
        **report,
        "diagnoses": [{"mistake": m, "explanation": f"the {m} mistake", "checks": ["b"]} for m in mistakes],
    }


def test_students_are_counted_per_diagnosed_mistake_most_first():
    reports = [
        ("ann", REPORTS[0][1]),
        ("bob", _diagnosed(REPORTS[1][1], "sin-cos-swapped")),
        ("cy", _diagnosed(REPORTS[2][1], "sin-cos-swapped", "base-ignored")),
        ("eve", _diagnosed(REPORTS[2][1], "sin-cos-swapped")),
    ]
    summary = summarize("t", reports)
    assert [(m.mistake, m.students) for m in summary.mistakes] == [
        ("sin-cos-swapped", 3),
        ("base-ignored", 1),
    ]
    text = render_markdown(summary)
    section = text.split("## Diagnosed mistakes")[1]
    assert "- **3 students**: sin-cos-swapped (the sin-cos-swapped mistake)" in section
    assert "- **1 student**: base-ignored" in section


def test_a_class_without_diagnoses_says_none_were_found():
    text = render_markdown(summarize("t", REPORTS))
    assert "## Diagnosed mistakes\n\n- none" in text


def test_a_mistakes_words_are_escaped_in_the_summary():
    hostile = {
        **REPORTS[1][1],
        "diagnoses": [{"mistake": "<b>x", "explanation": "[a](javascript:1)", "checks": ["b"]}],
    }
    text = render_markdown(summarize("t", [("bob", hostile)]))
    assert "<b>" not in text and "](javascript" not in text


def test_the_terminal_text_shows_student_text_as_written_one_line_each_controls_shown():
    hostile = {
        **REPORTS[1][1],
        "status": "error",  # (so the student is named, among those errored)
        "diagnoses": [{"mistake": "swap_*it*", "explanation": "a: b, [c]\n# d\x1b[2J", "checks": ["b"]}],
    }
    text = render_text(summarize("t", [("bob_[1]\x1b", hostile)]))
    assert "- 1 student: swap_*it* (a: b, [c]\\n# d\\x1b[2J)\n" in text
    assert "bob_[1]\\x1b" in text and "\x1b" not in text
    assert "\\:" not in text and "**" not in text and "##" not in text


def test_pass_rates_count_errored_students_as_not_passing_and_say_so():
    """Every student is in every check's denominator: one whose file could not be graded at
    all (a missing file: no line for the check) counts as not passing, as one whose file did
    not load does; the markdown, the text and the class page say so in words."""
    from grader.records.result import ungradable
    from grader.report.class_page import render as render_page

    reports = REPORTS + [("eve", ungradable("t", "1", 4, "eve", "eve: missing").to_dict())]
    summary = summarize("t", reports)
    assert summary.pass_rates == {"a": 3 / 5, "b": 1 / 5}
    said = "The share of all 5 submissions that passed each check; the 2 errored submissions "
    said += "(nothing could be graded) count as not passing."
    assert said in render_markdown(summary)
    assert said in render_text(summary)
    assert said in render_page(summary, [])
    one = summarize("t", REPORTS)
    assert "the 1 errored submission (nothing could be graded) counts as not passing." in render_markdown(one)
    clean = summarize("t", REPORTS[:3])
    assert "The share of all 3 submissions that passed each check." in render_markdown(clean)
