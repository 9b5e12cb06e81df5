"""The report formats a user reads, rendered from one Result in process: the terminal text,
the JSON contract, JUnit XML and Gradescope's results.json (GitHub's annotations:
test_github.py)."""

import json
import xml.etree.ElementTree as ET

from grader.records.result import ERROR, FAILED, PASSED, SKIPPED, CheckResult, Result
from grader.report import RENDERERS, gradescope, json_report, junit, text
from grader.submission.import_scan import scan_imports
from grader.task.spec import HIDDEN_VISIBILITIES


def _result(tmp_path):
    path = tmp_path / "alice.py"
    path.write_text("import numpy as np\n\ndef f(x):\n    return x\n")
    checks = [
        CheckResult("loads", PASSED, 0.0, 0.0),
        CheckResult(
            "values",
            FAILED,
            0.0,
            2.0,
            message="first difference at [1]",
            description="f doubles",
            function="f",
            failing_input="f(x=[1.0, 2.0])",
            output="debug 1\ndebug 2",
            line=4,
            seconds=0.5,
        ),
        CheckResult("shape", PASSED, 3.0, 3.0, description="same shape", seconds=0.25),
        CheckResult("other", SKIPPED, 0.0, 1.0, message="skipped: g is not defined"),
        CheckResult("more", SKIPPED, 0.0, 1.0, message="skipped: g is not defined"),
        CheckResult("crash", ERROR, 0.0, 1.0, message="ZeroDivisionError", function="f"),
    ]
    # as grading makes it: where f is defined, found by the scan of the file
    return Result(
        "t",
        str(path),
        3.0,
        8.0,
        FAILED,
        "bubblewrap",
        checks,
        output="hello\n",
        seconds=0.75,
        definitions=scan_imports(path.read_text(), [], str).defined_at(["f"]),
    )


def test_every_format_is_registered():
    assert set(RENDERERS) == {"text", "json", "junit", "gradescope", "html"}


def test_text_report_lists_checks_failures_and_the_score(tmp_path):
    shown = text.render(_result(tmp_path))
    assert "\x1b[" not in shown  # no colour unless asked
    assert "t · alice.py   (isolation: bubblewrap)" in shown.splitlines()[0]
    lines = shown.splitlines()
    assert any(line.strip().startswith("FAIL  values") and "0/2" in line for line in lines)
    assert "failing input: f(x=[1.0, 2.0])" in shown and "  | debug 2" in shown
    assert shown.count("skipped: g is not defined") == 1  # said once for two lines
    assert "Your file printed:" in shown and "  | hello" in shown
    assert lines[-1].startswith("Score: 3/8 (38%)") and lines[-1].endswith("failed")
    assert "\x1b[" in text.render(_result(tmp_path), colour=True)


def test_json_report_is_the_result_as_data(tmp_path):
    data = json.loads(json_report.render(_result(tmp_path)))
    assert data == json.loads(json.dumps(_result(tmp_path).to_dict()))
    assert [c["status"] for c in data["checks"]] == [
        "passed",
        "failed",
        "passed",
        "skipped",
        "skipped",
        "error",
    ]


def test_junit_counts_and_links_each_failure_to_its_line(tmp_path):
    root = ET.fromstring(junit.render(_result(tmp_path)))
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == (
        "6",
        "1",
        "1",
        "2",
    )
    assert suite.find("properties/property").get("value") == "3/8"
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert cases["values"].get("line") == "4"  # where it raised
    assert cases["crash"].get("line") == "3"  # else where f is defined
    assert cases["values"].find("failure").get("message") == "first difference at [1]"
    assert cases["values"].find("system-out").text == "debug 1\ndebug 2"
    assert cases["shape"].find("failure") is None and cases["shape"].get("line") is None
    assert suite.find("system-out").text == "hello\n"


def test_gradescope_has_one_test_per_check_with_points(tmp_path):
    results = json.loads(gradescope.render(_result(tmp_path)))
    names = [t["name"] for t in results["tests"]]
    assert "loads" not in names  # a passed 0-point line says nothing
    assert names[0] == "values: f doubles" and results["tests"][0]["number"] == "1"
    assert sum(t["max_score"] for t in results["tests"]) == 8 and results["score"] == 3
    assert {t["status"] for t in results["tests"]} == {"passed", "failed"}  # all it knows
    assert "max_score" not in results and results["output_format"] == "text"


def test_gradescope_tells_only_instructors_how_the_machine_graded(tmp_path):
    """The tier and its note are for operators: a student can do nothing about them, so they
    are in extra_data and a hidden test, never in what a student sees."""
    import dataclasses

    note = "graded in the unprivileged tier, not bubblewrap: bwrap said: no namespaces (sudo sysctl -w ...)"
    result = dataclasses.replace(_result(tmp_path), isolation="unprivileged", isolation_note=note)
    results = json.loads(gradescope.render(result))
    assert results["output"].startswith("t: 3/8 (failed)")
    shown = [results["output"]] + [json.dumps(t) for t in results["tests"] if t["visibility"] != "hidden"]
    for shown_text in shown:
        for word in ("sandbox", "bwrap", "sysctl", "tier", "unprivileged"):
            assert word not in shown_text, (word, shown_text)
    assert results["extra_data"]["isolation"] == "unprivileged"
    assert results["extra_data"]["isolation_note"] == note
    [environment] = [t for t in results["tests"] if t["visibility"] == "hidden"]
    assert note in environment["output"] and environment["max_score"] == 0 == environment["score"]
    assert sum(t["max_score"] for t in results["tests"]) == 8


def test_gradescope_shows_hidden_checks_with_the_tasks_visibility(tmp_path):
    import dataclasses

    import pytest

    from grader.grading.redact import for_students

    result = _result(tmp_path)
    secret = CheckResult("secret", FAILED, 0.0, 2.0, message="4321.5", hidden=True)
    result = dataclasses.replace(result, checks=[*result.checks, secret], max_score=10.0)
    shown = for_students(result)
    for visibility, expected in ((None, "after_due_date"), *((v, v) for v in HIDDEN_VISIBILITIES)):
        options = {} if visibility is None else {"hidden_visibility": visibility}
        results = json.loads(gradescope.render(shown, **options))
        by_name = {t["name"]: t for t in results["tests"]}
        assert by_name["secret"]["visibility"] == expected and by_name["secret"]["max_score"] == 2
        assert "4321.5" not in json.dumps(results)
        assert {t["visibility"] for n, t in by_name.items() if n != "secret"} <= {"visible", "hidden"}
        assert by_name["values: f doubles"]["visibility"] == "visible"
    with pytest.raises(ValueError):
        gradescope.render(shown, hidden_visibility="visible")
