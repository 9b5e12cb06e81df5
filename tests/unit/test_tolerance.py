"""Tolerances and index expressions of a task spec, as the spec and messages use them."""

import numpy as np
import pytest

from grader.grading.compare import check_values
from grader.task.index_expr import parse_select
from grader.task.tolerance import Tolerance


def test_a_tolerance_reads_as_it_is_written_in_the_spec():
    tol = Tolerance(rtol=1e-6, atol=0.5)
    assert str(tol) == "rtol=1e-06, atol=0.5" and tol.as_dict() == {"rtol": 1e-6, "atol": 0.5}
    assert Tolerance() == Tolerance(1e-7, 1e-9)


def test_atol_and_rtol_both_widen_the_match():
    expected = np.array([0.0, 100.0])
    assert check_values(expected, np.array([0.4, 100.0]), Tolerance(rtol=0, atol=0.5)).ok
    assert not check_values(expected, np.array([0.6, 100.0]), Tolerance(rtol=0, atol=0.5)).ok
    assert check_values(expected, np.array([0.0, 100.9]), Tolerance(rtol=0.01, atol=0)).ok
    assert not check_values(expected, np.array([0.0, 101.1]), Tolerance(rtol=0.01, atol=0)).ok


def test_index_expressions_parse_to_what_numpy_indexes_with():
    table = np.arange(24).reshape(2, 3, 4)
    for text in ("[:, 0:2]", "[..., -1]", "[1]", "[::2, 1:, ::-1]", "[ 0 , : ]"):
        index = parse_select(text)
        np.testing.assert_array_equal(table[index], eval(f"table{text}"))  # noqa: S307 (our own text)
    with pytest.raises(ValueError, match="a slice step cannot be 0"):
        parse_select("[::0]")
    with pytest.raises(ValueError, match="not an integer, a slice or"):
        parse_select("[1, x]")
