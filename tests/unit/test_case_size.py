"""The failing input shown is the smallest by one stated measure (case_size.py): array
elements first, then the sum of the integers; equal sizes keep their order."""

import numpy as np

from grader.task.case_size import case_size, smallest_first


def test_arrays_count_their_elements_then_integers_their_magnitude():
    assert case_size({"x": np.zeros((2, 3)), "base": 2.0}) == (6, 0)
    assert case_size({"max_len": 8192, "d_model": -2}) == (0, 8194)
    assert case_size({"xs": [np.zeros(4), [1, 2]], "flag": True, "name": "a"}) == (6, 0)
    assert case_size({"n": np.int64(5), "x": np.zeros(())}) == (1, 5)


def test_smallest_first_orders_by_elements_then_integers_and_keeps_ties_in_order():
    cases = [
        {"x": np.zeros((2, 3, 4))},  # the edge case listed first: 24 elements
        {"x": np.zeros((1, 2, 2)), "k": 9},  # 4 elements
        {"x": np.zeros((2, 2)), "k": 1},  # 4 elements, smaller integers
        {"x": np.ones((4, 1)), "k": 1},
    ]  # a tie with the one above
    assert smallest_first(cases) == [2, 3, 1, 0]
