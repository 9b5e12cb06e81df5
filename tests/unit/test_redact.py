"""What students see of a result: a hidden check keeps name, status and points but shows no
message, input, output, line or time; the total time counts visible checks only, in every
format (the renderers get the redacted result)."""
import json

from grader.redact import HIDDEN_NOTE, for_students
from grader.report import gradescope
from grader.result import FAILED, PASSED, CheckResult, Result


def _result():
    checks = [CheckResult("visible", FAILED, 0.0, 2.0, message="got 3", failing_input="f(1)",
                          output="printed", line=4, seconds=0.25),
              CheckResult("secret", FAILED, 0.0, 3.0, message="expected 4321.5", hidden=True,
                          failing_input="f(4321.5)", output="4321.5", line=9, seconds=4.0),
              CheckResult("secret-ok", PASSED, 1.0, 1.0, message="", hidden=True, seconds=2.0)]
    return Result("t", "s.py", 1.0, 6.0, FAILED, "bubblewrap", checks, seconds=6.25)


def test_a_hidden_failure_keeps_its_points_but_shows_nothing_of_its_inputs():
    shown = for_students(_result())
    visible, secret, secret_ok = shown.checks
    assert visible == _result().checks[0]                       # untouched
    assert (secret.name, secret.status, secret.score, secret.max_score) == ("secret", FAILED, 0.0, 3.0)
    assert secret.message == f"failed ({HIDDEN_NOTE})"
    assert secret.failing_input is None and secret.output == "" and secret.line is None
    assert secret.seconds == 0.0 and secret_ok.seconds == 0.0
    assert "4321.5" not in json.dumps(shown.to_dict())
    assert shown.score == 1.0 and shown.max_score == 6.0        # the grade is the same


def test_the_total_time_is_the_visible_checks_time():
    assert for_students(_result()).seconds == 0.25
    results = json.loads(gradescope.render(for_students(_result())))
    assert results["execution_time"] == 0.25      # a hidden case's 4 s would tell its input
    assert "4321.5" not in json.dumps(results)


def test_the_staff_view_is_not_redacted():
    staff = json.loads(gradescope.render(_result()))
    assert staff["execution_time"] == 6.25 and "4321.5" in json.dumps(staff)
