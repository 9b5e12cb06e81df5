"""Policy checks (how, not what: imports, mutation) count only when the submission does
some of the work; otherwise they are skipped with the reason ``idle`` and say why."""

import numpy as np
import pytest

from grader.grading.checks import KINDS
from grader.grading.checks.calls import DrawnOptions
from grader.grading.policy import skip_idle_policy_checks
from grader.records.result import FAILED, PASSED, SKIPPED, CheckResult
from grader.records.statuses import IDLE, IMPORTS, MISMATCH
from grader.task.check_kind import CheckOptions
from grader.task.spec import CheckSpec

IMPORTS_CHECK = CheckSpec("numpy-only", KINDS["imports"], CheckOptions())
TABLE_VALUES = CheckSpec("table", KINDS["property"], DrawnOptions(), call="table")
TABLE_TYPE = CheckSpec("table-type", KINDS["property"], DrawnOptions(compare="type"), call="table")
ADD_VALUES = CheckSpec("add", KINDS["property"], DrawnOptions(), call="add")
ADD_UNTOUCHED = CheckSpec("add-untouched", KINDS["mutation"], DrawnOptions(), call="add")
CHECKS = (IMPORTS_CHECK, TABLE_VALUES, TABLE_TYPE, ADD_VALUES, ADD_UNTOUCHED)


def _results(passed: set[str], checks=CHECKS) -> list[CheckResult]:
    return [
        CheckResult(c.name, PASSED, c.points, c.points)
        if c.name in passed
        else CheckResult(c.name, FAILED, 0.0, c.points, message="wrong", reason=MISMATCH)
        for c in checks
    ]


def _by_name(results):
    return {r.name: r for r in results}


def test_the_policy_kinds_are_the_ones_that_judge_how():
    assert {n for n, k in KINDS.items() if k.counts_only_with_work()} == {"imports", "mutation"}


def test_a_file_that_does_nothing_gets_no_policy_point_and_is_told_why():
    out = _by_name(skip_idle_policy_checks(CHECKS, _results({"numpy-only", "add-untouched"})))
    for name in ("numpy-only", "add-untouched"):
        assert (out[name].status, out[name].score, out[name].reason) == (SKIPPED, 0.0, IDLE)
    assert out["numpy-only"].message == (
        "skipped: counts only when your file does some of the "
        "work: no check of what it computes passed or came near"
    )
    assert "counts only when add does some of the work" in out["add-untouched"].message


def test_some_work_done_lets_the_policy_points_count():
    passed = {"numpy-only", "add-untouched", "add"}
    assert skip_idle_policy_checks(CHECKS, _results(passed)) == _results(passed)


def test_a_right_type_alone_is_not_the_work():
    out = _by_name(skip_idle_policy_checks(CHECKS, _results({"numpy-only", "table-type"})))
    assert out["numpy-only"].reason == IDLE and out["table-type"].status == PASSED


def test_an_untouched_input_counts_only_when_that_function_does_its_work():
    """A right table does not pay for an adder that returns x.copy(): it leaves x alone
    but does none of the adding."""
    out = _by_name(skip_idle_policy_checks(CHECKS, _results({"numpy-only", "table", "add-untouched"})))
    assert out["numpy-only"].status == PASSED
    assert out["add-untouched"].reason == IDLE


def test_a_policy_check_that_failed_keeps_its_own_failure():
    results = _results(set())
    results[0] = CheckResult("numpy-only", FAILED, 0.0, 1.0, message="scipy (line 1)", reason=IMPORTS)
    assert skip_idle_policy_checks(CHECKS, results)[0] == results[0]


def test_a_function_no_check_judges_falls_back_on_the_whole_file():
    checks = (IMPORTS_CHECK, TABLE_VALUES, ADD_UNTOUCHED)
    assert (
        _by_name(skip_idle_policy_checks(checks, _results({"table", "add-untouched"}, checks)))[
            "add-untouched"
        ].status
        == PASSED
    )
    assert (
        _by_name(skip_idle_policy_checks(checks, _results({"add-untouched"}, checks)))["add-untouched"].reason
        == IDLE
    )


def test_a_task_of_policy_checks_only_has_no_work_to_weigh():
    checks = (IMPORTS_CHECK,)
    assert skip_idle_policy_checks(checks, _results({"numpy-only"}, checks)) == _results(
        {"numpy-only"}, checks
    )


# --------------------------------------------------------------------------- what shows work


def test_one_fill_is_a_single_value_repeated_in_the_part_compared():
    import numpy as np

    from grader.grading.policy import one_fill

    assert one_fill([np.zeros((3, 5)), np.zeros((1, 7))])
    assert one_fill([np.full((2, 2), 4.0)])
    table = np.array([[0.0, 1.0, 0.0], [0.84, 0.54, 0.0]])
    assert not one_fill([table])
    assert one_fill([table], "[:, -1]")  # the last column alone is all 0
    assert not one_fill([table], "[0]")  # row 0 holds 0 and 1
    assert not one_fill([np.zeros(3), np.ones(3)])  # no one value fills both cases
    assert not one_fill([(5, 8)]) and not one_fill([])


def test_a_check_a_zero_table_passes_too_is_not_the_work():
    """np.zeros passes 'the last column of an odd width is 0': no computation shown."""
    out = _by_name(
        skip_idle_policy_checks(CHECKS, _results({"numpy-only", "table"}), filled=frozenset({"table"}))
    )
    assert out["numpy-only"].reason == IDLE
    assert out["table"].status == PASSED  # the check itself keeps its points


def test_a_printed_answer_is_not_the_work_on_a_script_task():
    """print((5, 8)) can be typed in; only the arrays the script leaves show computation."""
    from grader.grading.checks.script_output import PrintsOptions
    from grader.grading.checks.script_work import LeavesOptions

    prints = CheckSpec("prints-the-shape", KINDS["prints"], PrintsOptions(answer="answer", format="shape"))
    leaves = CheckSpec("builds-the-table", KINDS["leaves-array"], LeavesOptions(reference="table"))
    checks = (IMPORTS_CHECK, prints, leaves)
    out = _by_name(skip_idle_policy_checks(checks, _results({"numpy-only", "prints-the-shape"}, checks)))
    assert out["numpy-only"].reason == IDLE
    out = _by_name(skip_idle_policy_checks(checks, _results({"numpy-only", "builds-the-table"}, checks)))
    assert out["numpy-only"].status == PASSED


# --------------------------------------------------------------------------- wrong values, real work

from grader.grading.policy import near_miss
from grader.task.tolerance import Tolerance

TOL = Tolerance(rtol=0, atol=2e-3)


def _table(rows=6, width=8, sign=1.0, swapped=False, exponent=2):
    p = np.arange(rows)[:, None]
    angles = p / 10000.0 ** (exponent * np.arange(width // 2) / width)
    sines, cosines = sign * np.sin(angles), np.cos(angles)
    table = np.zeros((rows, width))
    table[:, 0::2], table[:, 1::2] = (cosines, sines) if swapped else (sines, cosines)
    return table


# (A check judges its smallest failing case, case_size.py: the sizes a near miss is seen at.
# A wrong exponent on a wide table is mostly cosines near 1, as a table of ones is.)
@pytest.mark.parametrize(
    "mistake, sizes",
    [
        (dict(sign=-1.0), [(1, 2), (2, 4), (6, 8), (100, 64)]),
        (dict(swapped=True), [(1, 2), (2, 4), (6, 8), (100, 64)]),
        (dict(exponent=1), [(2, 4), (6, 8)]),
    ],
    ids=["a sign wrong", "sine and cosine swapped", "exponent i, not 2i"],
)
def test_an_honest_wrong_table_came_near(mistake, sizes):
    for size in sizes:
        assert near_miss(_table(*size), _table(*size, **mistake), [], TOL), size


@pytest.mark.parametrize("size", [(1, 2), (2, 4), (6, 8), (100, 64)])
def test_a_stub_random_numbers_or_the_input_handed_back_did_not(size):
    want = _table(*size)
    assert not near_miss(want, np.zeros_like(want), [], TOL)
    assert not near_miss(want, np.full_like(want, 1.0), [], TOL)
    assert not near_miss(want, np.random.default_rng(1).uniform(-1, 1, want.shape), [], TOL)
    x = np.random.default_rng(2).uniform(-100, 100, want.shape)
    assert not near_miss(x + want, x.copy(), [x], TOL)
    assert near_miss(x + want, x + _table(*size, sign=-1.0), [x], TOL)  # the adder with one sign wrong


def test_a_wrong_shape_or_no_numbers_never_came_near():
    assert not near_miss(_table(), _table()[:, :4], [], TOL)
    assert not near_miss(_table(), "a table", [], TOL)


def test_a_near_miss_supports_the_policy_check_of_its_function():
    results = _results({"numpy-only", "add-untouched"})
    near = frozenset(r.name for r in results if r.status != PASSED)
    out = _by_name(skip_idle_policy_checks(CHECKS, results, near=near))
    assert out["numpy-only"].status == PASSED and out["add-untouched"].status == PASSED
