"""Result records go to plain data and back; a summary reads the structured reason."""

import json

from grader.records.result import CheckResult, Result, total, ungradable
from grader.records.statuses import CALL_STATUSES, REASONS, TIMED_OUT, call_reason
from grader.report.class_summary import summarize


def _result(*checks: CheckResult) -> Result:
    return total("t", "alice.py", "rlimits", list(checks), load_failed=False, task_version="1")


def test_a_result_survives_json_and_back():
    result = _result(
        CheckResult("a", "passed", 1.0, 1.0),
        CheckResult(
            "b", "failed", 0.0, 2.0, message="wrong", reason="mismatch", failing_input="f(x=1)", line=3
        ),
    )
    again = Result.from_dict(json.loads(json.dumps(result.to_dict())))
    assert again == result
    assert again.checks[1].reason == "mismatch"


def test_a_report_of_an_older_or_newer_grader_still_reads():
    report = _result(CheckResult("a", "failed", 0.0, 1.0, message="m")).to_dict()
    for check in report["checks"]:
        del check["reason"]  # older: no reason yet
    report["future_field"] = 1  # newer: a field this grader does not know
    read = Result.from_dict(report)
    assert read.checks[0].reason is None and read.checks[0].message == "m"


def test_json_keeps_every_field_it_had():
    keys = set(_result(CheckResult("a", "passed", 1.0, 1.0)).to_dict()["checks"][0])
    assert {
        "name",
        "status",
        "score",
        "max_score",
        "message",
        "description",
        "function",
        "failing_input",
        "output",
        "line",
        "cases",
        "hidden",
        "seconds",
    } <= keys


def test_call_statuses_map_to_reasons():
    assert [call_reason(s) for s in CALL_STATUSES if s != "ok"] == [
        "raised",
        "timeout",
        "crashed",
        "malformed",
        "budget",
    ]
    assert call_reason("something new") == "malformed"
    assert set(TIMED_OUT) <= set(REASONS)


def test_the_summary_finds_timeouts_by_reason_not_by_words():
    timed = _result(
        CheckResult("a", "failed", 0.0, 1.0, message="the call did not finish within 2 s", reason="timeout")
    )
    budget = _result(CheckResult("a", "error", 0.0, 1.0, message="used up its budget", reason="budget"))
    # A student's own exception text is not a timeout, whatever it says.
    words = _result(
        CheckResult(
            "a",
            "failed",
            0.0,
            1.0,
            reason="raised",
            message="raised ValueError: did not finish within my time budget",
        )
    )
    stored = [("timed", timed.to_dict()), ("budget", budget.to_dict()), ("words", words.to_dict())]
    summary = summarize("t", [(student, Result.from_dict(row)) for student, row in stored])
    assert summary.timed_out == ["timed", "budget"]


def test_the_summary_reads_reports_stored_before_reasons():
    old = _result(
        CheckResult("a", "failed", 0.0, 1.0, message="the call did not finish within 2 s")
    ).to_dict()
    for check in old["checks"]:
        del check["reason"]
    summary = summarize("t", [("old", Result.from_dict(old))])
    assert summary.timed_out == ["old"] and summary.pass_rates == {"a": 0.0}


def test_an_ungradable_result_says_why():
    result = ungradable("t", "1", 3.0, "x.py", "missing")
    assert result.status == "error" and result.checks[0].reason == "ungradable"


def test_a_diagnosis_and_a_picture_survive_json_and_back():
    from grader.records.result import Diagnosis, Picture

    check = CheckResult(
        "b",
        "failed",
        0.0,
        2.0,
        reason="mismatch",
        mistake="swapped",
        picture=Picture([[0.0, 1.0]], [[1.0, 0.0]], [1, 2], [1, 2]),
    )
    result = _result(check)
    result.diagnoses = [Diagnosis("swapped", "sin and cos swapped", ["b"])]
    again = Result.from_dict(json.loads(json.dumps(result.to_dict())))
    assert again == result
    assert again.checks[0].picture.got == [[1.0, 0.0]] and again.diagnoses[0].checks == ["b"]


# A row as an older grader stored it: no task, no reason, mistake, picture... in its
# checks, integer points, and a field this grader no longer knows.
OLD_ROW = {
    "submission": "bob.py",
    "score": 1,
    "max_score": 4,
    "status": "failed",
    "isolation": "bubblewrap",
    "checks": [
        {"name": "a", "status": "passed", "score": 1, "max_score": 1, "message": ""},
        {"name": "b", "status": "failed", "score": 0, "max_score": 3, "message": "the call did not finish"},
    ],
    "sandbox_notes": ["gone since"],
}


def _current_row():
    from grader.records.result import Diagnosis, Picture

    result = _result(
        CheckResult("a", "passed", 1.0, 1.0),
        CheckResult(
            "b",
            "failed",
            0.0,
            3.0,
            message="wrong ünïcode",
            reason="mismatch",
            mistake="swapped",
            picture=Picture([[0.0, None]], [[1.0, 0.5]], [1, 2], [1, 2], where="rows 0-0"),
        ),
    )
    result.diagnoses = [Diagnosis("swapped", "sin and cos swapped", ["b"])]
    result.definitions = {"f": 3}
    return result.to_dict()


def test_a_row_read_back_is_written_back_byte_for_byte(tmp_path):
    """Result.from_dict then to_dict gives the very row read, a current grader's and an
    older one's (no field added, none lost, same order), so the writers' output is what it
    was when they wrote the rows as read: reports-<task>.jsonl and the gradebook's JSON."""
    from grader.classroom.gradebook import Gradebook
    from grader.report.class_summary import write_jsonl
    from grader.student_text import clean_report

    rows = [("ann", _current_row()), ("bob", OLD_ROW)]
    for _, row in rows:
        text = json.dumps(row, ensure_ascii=False)
        assert json.dumps(Result.from_dict(json.loads(text)).to_dict(), ensure_ascii=False) == text
    old = Result.from_dict(OLD_ROW)
    assert old.checks[1].lacked("reason") and old.checks[1].reason is None and old.lacked("task")
    assert not Result.from_dict(_current_row()).checks[0].lacked("reason")

    path = tmp_path / "reports.jsonl"
    write_jsonl(str(path), [(student, Result.from_dict(row)) for student, row in rows])
    as_dicts = "".join(  # (how write_jsonl wrote the rows it was given as dicts)
        json.dumps(clean_report({"student": student, **row}), ensure_ascii=False) + "\n"
        for student, row in rows
    )
    assert path.read_bytes() == as_dicts.encode("utf-8")

    book = Gradebook(str(tmp_path / "gradebook.sqlite"))
    try:
        for student, row in rows:
            book.record("t", student, "h", "1", "d", Result.from_dict(row))
        stored = dict(book.db.execute("SELECT student, report FROM results ORDER BY student"))
        assert stored == {student: json.dumps(row) for student, row in rows}
        assert [(s, r.to_dict()) for s, r in book.reports("t")] == rows
    finally:
        book.close()
