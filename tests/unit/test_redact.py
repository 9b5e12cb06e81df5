"""What students see of a result: a hidden check keeps name, status and points but shows no
message, input, output, line or time; the total time counts visible checks only, in every
format (the renderers get the redacted result)."""

import json

from grader.grading.redact import HIDDEN_NOTE, for_students
from grader.records.result import FAILED, PASSED, CheckResult, Result
from grader.report import gradescope


def _result():
    checks = [
        CheckResult(
            "visible",
            FAILED,
            0.0,
            2.0,
            message="got 3",
            failing_input="f(1)",
            output="printed",
            line=4,
            seconds=0.25,
        ),
        CheckResult(
            "secret",
            FAILED,
            0.0,
            3.0,
            message="expected 4321.5",
            hidden=True,
            failing_input="f(4321.5)",
            output="4321.5",
            line=9,
            seconds=4.0,
        ),
        CheckResult("secret-ok", PASSED, 1.0, 1.0, message="", hidden=True, seconds=2.0),
    ]
    return Result("t", "s.py", 1.0, 6.0, FAILED, "bubblewrap", checks, seconds=6.25)


def test_a_hidden_failure_keeps_its_points_but_shows_nothing_of_its_inputs():
    shown = for_students(_result())
    visible, secret, secret_ok = shown.checks
    assert visible == _result().checks[0]  # untouched
    assert (secret.name, secret.status, secret.score, secret.max_score) == ("secret", FAILED, 0.0, 3.0)
    assert secret.message == f"failed ({HIDDEN_NOTE})"
    assert secret.failing_input is None and secret.output == "" and secret.line is None
    assert secret.seconds == 0.0 and secret_ok.seconds == 0.0
    assert "4321.5" not in json.dumps(shown.to_dict())
    assert shown.score == 1.0 and shown.max_score == 6.0  # the grade is the same


def test_the_total_time_is_the_visible_checks_time():
    assert for_students(_result()).seconds == 0.25
    results = json.loads(gradescope.render(for_students(_result())))
    assert results["execution_time"] == 0.25  # a hidden case's 4 s would tell its input
    assert "4321.5" not in json.dumps(results)


def test_the_staff_view_is_not_redacted():
    staff = json.loads(gradescope.render(_result()))
    assert staff["execution_time"] == 6.25 and "4321.5" in json.dumps(staff)


# --------------------------------------------------------------------------- every field, every format
# A submission holding a hidden input can modulate every field of that check's result but its
# points: what it printed or raised, where (line, cell), after how many cases, why (raised,
# timed out, wrong value), how long it took, what picture it leaves. Two hidden results that
# differ in all of those, with the same points, must look the same to students everywhere.

import dataclasses

from grader.integrations import course_ci
from grader.records.result import ERROR, SKIPPED, Diagnosis, Picture
from grader.records.statuses import MISMATCH, RAISED, TIMED_OUT_BEFORE
from grader.report import RENDERERS, github, junit

VISIBLE = CheckResult(
    "visible",
    FAILED,
    0.0,
    2.0,
    message="got 3",
    failing_input="f(1)",
    output="printed",
    line=4,
    seconds=0.25,
    function="f",
    reason=MISMATCH,
)


def _hidden(status=FAILED, **fields) -> CheckResult:
    return CheckResult(
        "edge-cases", status, 0.0, 3.0, description="the edge cases", function="f", hidden=True, **fields
    )


MODULATED = [  # one hidden check's result, as submissions choosing it differently make it
    _hidden(),
    _hidden(
        status=ERROR,
        message="ZeroDivisionError: d_model=1 max_len=8191",
        reason=RAISED,
        line=17,
        cell=3,
        cases=41,
        seconds=3.75,
        output="4 6 100.0",
        failing_input="f(4, 6, base=100.0)",
        mistake="sin-cos-swapped",
        picture=Picture([[1.0]], [[2.0]], [1, 1], [1, 1], "rows 0-0"),
    ),
    _hidden(status=SKIPPED, message="not run: f timed out (limit 0.5 s)", reason=TIMED_OUT_BEFORE, cases=7),
    _hidden(
        message="values differ at [8190, 1023]",
        reason=MISMATCH,
        line=2,
        cases=1,
        seconds=0.001,
        output="x" * 500,
    ),
]


def _with_hidden(check: CheckResult) -> Result:
    return Result(
        "t",
        "s.py",
        0.0,
        5.0,
        FAILED,
        "bubblewrap",
        [VISIBLE, check],
        seconds=9.0,
        diagnoses=[Diagnosis("m", "explained", ["visible"])],
    )


def _student_outputs(result: Result) -> dict[str, str]:
    shown = for_students(result)
    outputs = {name: render(shown) for name, render in RENDERERS.items()}
    outputs["ci-summary"] = course_ci.markdown([shown], 0.0, 80.0)
    outputs["ci-log"] = "\n".join(course_ci.reasons(shown))
    outputs["ci-junit"] = junit.render_many([shown])
    outputs["ci-annotations"] = "\n".join(github.annotations([shown], "/nowhere"))
    return outputs


def test_a_hidden_check_looks_the_same_in_every_format_whatever_the_submission_did():
    first = _student_outputs(_with_hidden(MODULATED[0]))
    for other in MODULATED[1:]:
        assert _student_outputs(_with_hidden(other)) == first, other


def test_a_passed_hidden_check_shows_nothing_the_submission_chose_either():
    passed = [dataclasses.replace(c, status=PASSED, score=3.0, reason=None) for c in MODULATED]
    first = _student_outputs(_with_hidden(passed[0]))
    for other in passed[1:]:
        assert _student_outputs(_with_hidden(other)) == first, other


def test_every_field_of_a_hidden_check_in_the_student_json_is_the_tasks_or_its_points():
    for modulated in MODULATED:
        shown = json.loads(RENDERERS["json"](for_students(_with_hidden(modulated))))
        hidden = next(c for c in shown["checks"] if c["name"] == "edge-cases")
        blank = dataclasses.asdict(CheckResult("", FAILED, 0.0, 0.0))
        task_given = {
            "name": "edge-cases",
            "description": "the edge cases",
            "function": "f",
            "hidden": True,
            "max_score": 3.0,
        }
        for field, value in hidden.items():
            if field in task_given:
                assert value == task_given[field], field
            elif field == "status":
                assert value == FAILED
            elif field == "score":
                assert value == 0.0
            elif field == "message":
                assert value == f"failed ({HIDDEN_NOTE})"
            else:
                assert value == blank[field], field
