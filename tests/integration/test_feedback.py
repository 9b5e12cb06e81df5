"""The report tells a student what is wrong: which function, the smallest failing input
(as Python they can paste to get the same call), expected against actual."""

import importlib.util
import json
import os

import numpy as np
import pytest
from helpers.cli import run_cli
from helpers.paths import PE_SAMPLES, PE_TASK
from helpers.tasks import write

from grader.grading.run import grade


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
    assert "values differ in the result: at [" in check.message
    assert "largest error" in check.message
    assert check.failing_input.startswith("sinusoidal_pe(max_len=")


def test_in_place_addition_is_named(pe_task):
    check = _check(pe_task, "mistake_adds_in_place.py", "add-leaves-input-unchanged")
    assert "your function changed its argument `x` in place" in check.message
    assert "x += pe" in check.message  # the task's hint names the fix


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
    assert [(c.name, c.failing_input, c.message) for c in first.checks] == [
        (c.name, c.failing_input, c.message) for c in second.checks
    ]


def test_cached_and_fresh_cases_agree(pe_task, tmp_path, monkeypatch):
    from grader.grading.run import GradeOptions

    path = os.path.join(PE_SAMPLES, "mistake_odd_last_column_filled.py")
    cached = grade(pe_task, path)  # (each grade prepares the task anew: nothing kept in memory)
    fresh = grade(pe_task, path, GradeOptions(use_cache=False))
    assert [(c.name, c.status, c.failing_input) for c in cached.checks] == [
        (c.name, c.status, c.failing_input) for c in fresh.checks
    ]


# --------------------------------------------------------------------------- pasteable inputs

# Right on small or constant inputs, wrong (by 1) on larger varied ones: its failing inputs
# are arrays too big to write out, drawn from a seed.
WRONG_ON_VARIED_INPUT = """
import numpy as np

def sinusoidal_pe(max_len, d_model, base=10000.0):
    positions = np.arange(max_len, dtype=np.float64)[:, np.newaxis]
    pairs = np.arange(d_model // 2, dtype=np.float64)
    angles = positions / np.power(float(base), 2.0 * pairs / d_model)
    table = np.zeros((max_len, d_model))
    table[:, 0:2 * len(pairs):2] = np.sin(angles)
    table[:, 1:2 * len(pairs):2] = np.cos(angles)
    return table

def add_positional_encoding(x, base=10000.0):
    out = x + sinusoidal_pe(x.shape[-2], x.shape[-1], base)
    return out + 1.0 if x.size > 30 and np.ptp(x) > 0 else out
"""


def _module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _failed_checks(task_folder, submission):
    done = run_cli("check", task_folder, submission, "--format", "json", timeout=300)
    assert done.returncode == 1, done.stderr
    return [c for c in json.loads(done.stdout)["checks"] if c["status"] == "failed"]


@pytest.fixture(scope="module")
def kit(tmp_path_factory):
    out = tmp_path_factory.mktemp("kits")
    done = run_cli("kit", PE_TASK, "-o", str(out))
    assert done.returncode == 0, done.stderr
    return str(out / "positional-encoding")


@pytest.mark.parametrize("where", ["task", "kit"])
def test_a_pasted_failing_input_reproduces_the_failure(tmp_path, kit, where):
    """Evaluating the printed call with numpy gives the reference's answer and the file's,
    and they differ: the student can run the very call that failed."""
    submission = write(tmp_path / "wrong_on_varied.py", WRONG_ON_VARIED_INPUT)
    student = _module(submission, "wrong_on_varied")
    reference = _module(os.path.join(PE_TASK, "reference.py"), "pe_reference")
    failed = _failed_checks(PE_TASK if where == "task" else kit, submission)
    assert {c["name"] for c in failed} >= {"add-2d", "add-batch-axes"}
    for check in failed:
        call = check["failing_input"]
        assert "default_rng(" in call, call  # too big to write out: rebuilt from its seed
        want = eval(call, {"np": np, "add_positional_encoding": reference.add_positional_encoding})
        got = eval(call, {"np": np, "add_positional_encoding": student.add_positional_encoding})
        assert want.size > 30 and not np.allclose(want, got, rtol=1e-6, atol=1e-6), call


def _sent(call, function):
    """The arguments a printed call passes, by evaluating it."""
    seen = {}
    eval(call, {"np": np, function: lambda **kwargs: seen.update(kwargs)})
    return seen


def _failing_frozen_cases(task, check_name, student, reference):
    """The frozen cases of a check on which ``student`` differs from the reference or
    raises (run here, in process: the sample is the project's own file)."""
    from grader.cases import freeze_files as frozen
    from grader.task.case_size import case_size

    check = next(c for c in task.checks if c.name == check_name)
    cases = frozen.frozen_cases(frozen.load_freeze(task), check)
    failing = []
    for args in cases.cases:
        function = getattr(student, check.call)
        try:
            got = function(**{k: np.copy(v) if isinstance(v, np.ndarray) else v for k, v in args.items()})
            ok = np.shape(got) == np.shape(want := getattr(reference, check.call)(**args)) and np.allclose(
                got, want, rtol=1e-6, atol=1e-6
            )
        except Exception:
            ok = False
        if not ok:
            failing.append(args)
    return sorted(failing, key=case_size), case_size


def test_the_input_shown_is_the_smallest_failing_one_edge_cases_included(pe_task, kit):
    """mistake_sequence_axis_first.py fails add-batch-axes on its listed edge cases (the
    smallest of them has 24 elements) and on smaller generated ones: the smallest failing
    frozen case is shown in a kit (no reference to shrink with), and with the reference
    Hypothesis may only find a smaller one still."""
    path = os.path.join(PE_SAMPLES, "mistake_sequence_axis_first.py")
    student = _module(path, "sequence_axis_first")
    reference = _module(os.path.join(PE_TASK, "reference.py"), "pe_reference_2")
    failing, size = _failing_frozen_cases(pe_task, "add-batch-axes", student, reference)
    smallest = failing[0]
    assert size(smallest) < (24, 0)  # smaller than any edge case of the check
    kit_check = {c["name"]: c for c in _failed_checks(kit, path)}["add-batch-axes"]
    shown = _sent(kit_check["failing_input"], "add_positional_encoding")
    assert shown.keys() == smallest.keys()
    assert all(np.array_equal(shown[k], smallest[k]) for k in smallest)
    full_check = {c.name: c for c in grade(pe_task, path).checks}["add-batch-axes"]
    assert size(_sent(full_check.failing_input, "add_positional_encoding")) <= size(smallest)


def test_a_script_near_miss_names_the_variable_that_holds_the_result():
    """mistake_sin_cos_swapped.py keeps its (5, 8) angles, then its (wrong) table: the
    message is about the table it built, not the step before it."""
    from helpers.paths import ROOT

    from grader.authoring import load_task

    task = load_task(os.path.join(ROOT, "tasks", "pe-table-shape"))
    result = grade(task, os.path.join(ROOT, "submissions", "pe-table-shape", "mistake_sin_cos_swapped.py"))
    message = {c.name: c for c in result.checks}["builds-the-table"].message
    assert message.startswith(
        "variable 'encoding' has the table's shape (5, 8) but not its "
        "values (variable 'angles' has that shape too): 40 of 40 values are off"
    ), message


SLOW_TASK = """
id: slow
title: Slow
version: 1
functions:
  square: [x]
limits: {call_seconds: 1, submission_seconds: 3}
checks:
  - name: squares
    kind: property
    call: square
    draw:
      n: {integers: {min: 1, max: 50}}
    args:
      x: {array: {shape: [{ref: n}]}}
    cases: 20
    points: 1
  - name: later
    kind: example
    call: square
    args: {x: {array: {value: [12345.0]}}}   # never among the drawn ones (|x| <= 1000)
    points: 1
"""

# 50 ms a call, and wrong only on varied arrays of more than 25 values: shrinking its
# failure takes more calls than the 3 s budget holds.
SLOW_AND_WRONG_ON_LARGE = """
import time
import numpy as np

def square(x):
    time.sleep(0.05)
    x = np.asarray(x, dtype=float)
    return x ** 2 + (1.0 if x.size > 25 and np.ptp(x) > 0 else 0.0)
"""


def test_shrinking_a_failure_to_show_it_costs_no_verdict(tmp_path):
    """The time spent shrinking is the grader's: the check after it still has the whole
    budget the submission had left, and passes."""
    from helpers.tasks import make_task

    from grader.authoring import load_task

    task = load_task(make_task(tmp_path / "slow", SLOW_TASK))
    result = grade(task, write(tmp_path / "slow_sub.py", SLOW_AND_WRONG_ON_LARGE))
    checks = {c.name: c for c in result.checks}
    assert checks["squares"].status == "failed" and checks["squares"].reason == "mismatch"
    assert checks["later"].status == "passed", checks["later"].message
    x = _sent(checks["squares"].failing_input, "square")["x"]
    assert x.size > 25 and np.ptp(x) > 0


# The attack on that: prepare in the time given back, for a later check whose call needs
# more than the 1 s call limit unless the work was done before.
PREPARES_WHILE_SHRUNK = """
import time
import numpy as np

PREPARED = [0.0]

def square(x):
    x = np.asarray(x, dtype=float)
    if x.size == 1 and x[0] == 12345.0:            # the later check
        time.sleep(max(0.0, 1.8 - PREPARED[0]))    # the work not done yet
        return x ** 2
    if x.size > 25 and np.ptp(x) > 0:             # fails, and its failure gets shrunk...
        if PREPARED[0] < 1.8:
            time.sleep(0.1)                        # ...while it prepares
            PREPARED[0] += 0.1
        return x ** 2 + 1.0
    return x ** 2
"""


def test_what_a_submission_prepares_while_its_failure_is_shrunk_serves_no_later_check(tmp_path):
    """Once a worker has run more than a moment outside the budget it is replaced: the
    later check meets the submission as it was loaded, as if no shrinking had happened."""
    from helpers.tasks import make_task

    from grader.authoring import load_task

    task = load_task(make_task(tmp_path / "slow", SLOW_TASK))
    result = grade(task, write(tmp_path / "prepares.py", PREPARES_WHILE_SHRUNK))
    checks = {c.name: c for c in result.checks}
    assert checks["squares"].status == "failed"
    assert checks["later"].status != "passed" and checks["later"].reason == "timeout", checks["later"]


def test_an_empty_batch_of_tables_fails_its_checks_with_no_picture_never_errs(tmp_path):
    student = write(
        tmp_path / "empty.py",
        "import numpy as np\n\n"
        "def sinusoidal_pe(max_len, d_model, base=10000.0):\n"
        "    return np.zeros((0, max_len, d_model))\n\n"
        "def add_positional_encoding(x, base=10000.0):\n"
        "    return np.zeros((0,) + np.shape(x))\n",
    )
    done = run_cli("check", PE_TASK, student, "--format", "json", timeout=300)
    checks = json.loads(done.stdout)["checks"]
    assert [c["name"] for c in checks if c["status"] == "error"] == []
    shape_failures = [c for c in checks if "returned shape (0," in c["message"]]
    assert shape_failures and all(c["picture"] is None for c in shape_failures)
