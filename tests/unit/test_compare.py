"""Comparison messages a student understands, computed only from plain data."""

import numpy as np

from grader.grading.compare import (
    Tolerance,
    check_inputs_unchanged,
    check_shape,
    check_type,
    check_values,
    parse_select,
)
from grader.sandbox import ForeignArray, Opaque

TOL = Tolerance(rtol=1e-6, atol=1e-6)


def test_first_difference_largest_error_and_count():
    want = np.zeros((2, 3))
    got = want.copy()
    got[0, 2] = 0.5
    got[1, 1] = 2.0
    verdict = check_values(want, got, TOL)
    assert not verdict.ok
    assert "at [0, 2] expected 0, got 0.5" in verdict.message
    assert "2 of 6 values are off" in verdict.message
    assert "largest error 2 at [1, 1]" in verdict.message


def test_within_tolerance_passes_and_nan_matches_nan():
    want = np.array([1.0, np.nan])
    assert check_values(want, want + [1e-9, 0], TOL).ok
    verdict = check_values(np.array([1.0, 2.0]), np.array([1.0, np.nan]), TOL)
    assert not verdict.ok and "contains NaN" in verdict.message


def test_shape_mismatch_is_said_plainly():
    verdict = check_values(np.zeros((3, 4)), np.zeros((4, 3)), TOL)
    assert "returned shape (4, 3); expected shape (3, 4)" in verdict.message
    assert check_shape(np.zeros((3, 4)), np.zeros((3, 4))).ok


def test_list_values_compare_but_type_check_fails():
    value = ForeignArray(np.zeros((2, 2)), "list")
    assert check_values(np.zeros((2, 2)), value, TOL).ok
    verdict = check_type(value, {"class": "ndarray", "dtype": "floating"}, np.zeros((2, 2)))
    assert "returned a list" in verdict.message


def test_integer_dtype_fails_the_float_rule():
    verdict = check_type(np.zeros(3, dtype=np.int64), {"dtype": "floating"}, None)
    assert "dtype int64" in verdict.message and "floating" in verdict.message


def test_opaque_objects_and_none():
    verdict = check_values(np.zeros(2), Opaque("Liar", "<Liar>"), TOL)
    assert "returned a Liar" in verdict.message
    assert "forget a return" in check_values(np.zeros(2), None, TOL).message


def test_selection_reports_in_its_own_terms():
    want = np.zeros((3, 4))
    got = want.copy()
    got[2, 1] = 1.0
    verdict = check_values(want, got, TOL, select="[:, 0:2]")
    assert "in result[:, 0:2]" in verdict.message and "at [2, 1]" in verdict.message
    assert check_values(want, got, TOL, select="[:, 2:]").ok


def test_parse_select_accepts_numpy_indexes_only():
    assert parse_select("[:, 0:2]") == (slice(None), slice(0, 2, None))
    assert parse_select("[..., -1]") == (Ellipsis, -1)
    for bad in ("[__import__('os')]", "0:2", "[]", "[::0]"):
        try:
            parse_select(bad)
        except ValueError:
            continue
        raise AssertionError(bad)


def test_mutation_names_the_parameter_position_and_values():
    before = {"base": 2.0, "x": np.zeros((2, 2))}
    after = [2.0, np.array([[0.0, 0.0], [0.0, 1.5]])]
    verdict = check_inputs_unchanged(before, after)
    assert (
        "your function changed its argument `x` in place: at [1, 1] it was 0 before the call and 1.5 after"
    ) in verdict.message
    assert "Leave `x` as it is and return a new array." in verdict.message
    assert check_inputs_unchanged(before, [2.0, np.zeros((2, 2))]).ok


def test_two_different_numbers_never_look_equal():
    """A float32 table's 1.8414710 against 1.84147098 both read 1.841471 at 8 digits."""
    want = np.array([[1.0, 1.8414709848078965]])
    got = np.array([[1.0, 1.8414709848078965]], dtype=np.float32)
    verdict = check_values(want, got, Tolerance(rtol=0, atol=1e-8))
    assert "at [0, 1] expected 1.84147098, got 1.84147096;" in verdict.message
    verdict = check_values(np.array([0.1]), np.array([np.nextafter(0.1, 1.0)]), Tolerance(rtol=0, atol=0))
    assert "expected 0.1, got 0.10000000000000002;" in verdict.message


def test_mutation_shows_values_that_differ_and_no_task_specific_advice():
    verdict = check_inputs_unchanged({"m": np.array([1.0])}, [np.array([1.0 + 1e-12])])
    assert "it was 1 before the call and 1.000000000001 after" in verdict.message
    assert "pe" not in verdict.message and "Leave `m` as it is" in verdict.message


def test_large_arrays_are_judged_as_small_ones():
    """A large array is first looked at a chunk at a time; the verdict and the message are
    those of the whole-array rules, NaN and infinity included."""
    from grader.grading.compare import CHUNK

    rng = np.random.default_rng(0)
    want = rng.uniform(-1, 1, size=(3 * CHUNK // 64 + 5, 64))
    tol = Tolerance()
    assert check_values(want, want + 1e-12, tol).ok
    with_nan = want.copy()
    with_nan[-1, -1] = np.nan
    with_nan[0, 0] = np.inf
    assert check_values(with_nan, with_nan.copy(), tol).ok  # NaN where NaN, inf where inf
    off = want.copy()
    off[-1, -1] += 1.0  # in the last, partial chunk
    verdict = check_values(want, off, tol)
    assert not verdict.ok
    assert (
        f"at [{want.shape[0] - 1}, 63]" in verdict.message
        and f"1 of {want.size} values are off" in verdict.message
    )
