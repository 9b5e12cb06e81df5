"""The report tells a student what is wrong: which function, the smallest failing input,
expected against actual."""
import os

from conftest import PE_SAMPLES
from grader.grading import grade


def _check(pe_task, sample, name):
    result = grade(pe_task, os.path.join(PE_SAMPLES, sample))
    return {c.name: c for c in result.checks}[name]


def test_shrunk_failing_input_is_minimal(pe_task):
    check = _check(pe_task, "mistake_positions_from_one.py", "positions-start-at-zero")
    # d_model = 1 has no pair (its row 0 is [0] either way), so the smallest failing
    # table is one row of one pair.
    assert check.failing_input == "sinusoidal_pe(max_len=1, d_model=2)"
    assert "expected 0, got 0.84147098" in check.message
    assert check.function == "sinusoidal_pe"


def test_message_names_first_difference_and_largest_error(pe_task):
    check = _check(pe_task, "mistake_exponent_missing_two.py", "exponent-2i-over-d")
    assert check.status == "failed"
    assert "values differ: at [" in check.message
    assert "largest error" in check.message
    assert check.failing_input.startswith("sinusoidal_pe(max_len=")


def test_in_place_addition_is_named(pe_task):
    check = _check(pe_task, "mistake_adds_in_place.py", "add-leaves-input-unchanged")
    assert "in place" in check.message or "input array itself" in check.message


def test_list_instead_of_array_is_named(pe_task):
    check = _check(pe_task, "mistake_returns_list.py", "table-returns-float-array")
    assert "returned a list" in check.message and "np.ndarray" in check.message


def test_exception_reports_type_line_and_code(pe_task):
    check = _check(pe_task, "mistake_crashes_on_odd_width.py", "odd-width-exponent")
    assert "raised ValueError: cannot reshape" in check.message
    assert "line 10 in sinusoidal_pe" in check.message


def test_missing_function_skips_only_its_checks(pe_task):
    result = grade(pe_task, os.path.join(PE_SAMPLES, "broken_wrong_function_name.py"))
    by_name = {c.name: c for c in result.checks}
    assert "add_positional_encoding is not defined" in by_name["loads"].message
    assert by_name["add-2d"].status == "skipped"
    assert "add_positional_encoding is not defined" in by_name["add-2d"].message
    assert by_name["exponent-2i-over-d"].status == "passed"


def test_file_that_does_not_import_gets_one_clear_error(pe_task):
    result = grade(pe_task, os.path.join(PE_SAMPLES, "broken_syntax_error.py"))
    assert result.status == "error"
    load = result.checks[0]
    assert load.name == "loads" and "SyntaxError" in load.message and "line 7" in load.message
    assert all(c.status == "skipped" for c in result.checks[1:])


def test_same_report_every_time(pe_task):
    """Derandomized: every student, every run, sees the same cases."""
    first = grade(pe_task, os.path.join(PE_SAMPLES, "mistake_ignores_base.py"))
    second = grade(pe_task, os.path.join(PE_SAMPLES, "mistake_ignores_base.py"))
    assert [(c.name, c.failing_input, c.message) for c in first.checks] == \
           [(c.name, c.failing_input, c.message) for c in second.checks]


def test_cached_and_fresh_cases_agree(pe_task, tmp_path, monkeypatch):
    from grader import cases
    from grader.grading import Options
    path = os.path.join(PE_SAMPLES, "mistake_odd_last_column_filled.py")
    cached = grade(pe_task, path)
    monkeypatch.setattr(cases, "_memory", {})
    fresh = grade(pe_task, path, Options(use_cache=False))
    assert [(c.name, c.status, c.failing_input) for c in cached.checks] == \
           [(c.name, c.status, c.failing_input) for c in fresh.checks]
