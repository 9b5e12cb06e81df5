"""What `grader ci` prints for a task that lost points: a diagnosed mistake first."""

from grader.integrations.course_ci import reasons
from grader.records.result import CheckResult, Diagnosis, total


def test_the_likely_cause_comes_before_the_failed_checks():
    result = total(
        "pe",
        "s.py",
        "bubblewrap",
        [
            CheckResult("a", "failed", 0.0, 1.0, message="values differ", reason="mismatch"),
            CheckResult("b", "passed", 1.0, 1.0),
        ],
        load_failed=False,
    )
    result.diagnoses = [Diagnosis("swapped", "sin and cos swapped\x1b[2J", ["a"])]
    lines = reasons(result)
    assert lines[0].strip() == "likely cause: sin and cos swapped\\x1b[2J (explains a)"
    assert lines[1].strip() == "a: values differ"


def test_no_diagnosis_no_cause_line():
    result = total(
        "pe",
        "s.py",
        "bubblewrap",
        [CheckResult("a", "failed", 0.0, 1.0, message="values differ")],
        load_failed=False,
    )
    assert [line.strip() for line in reasons(result)] == ["a: values differ"]
