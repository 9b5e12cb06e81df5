"""The picture of a failed values check: both outputs as plain data, cut to a corner."""

import numpy as np

from grader.grading.pictures import picture
from grader.records.result import PICTURE_SIDE


def test_a_table_is_kept_as_rows_of_floats_with_its_shape():
    shot = picture(np.array([[0.0, 1.0]]), np.array([[1.0, np.nan]]))
    assert shot.expected == [[0.0, 1.0]] and shot.got == [[1.0, None]]
    assert shot.expected_shape == [1, 2] and shot.where == ""


def test_a_large_batched_output_is_cut_to_its_first_entry_and_corner():
    shot = picture(np.zeros((2, 100, 70)), np.ones((2, 100, 70)))
    assert len(shot.got) == PICTURE_SIDE and len(shot.got[0]) == PICTURE_SIDE
    assert shot.where == "batch entry [0], rows 0-63 of 100, columns 0-63 of 70"
    assert shot.got_shape == [2, 100, 70]


def test_an_empty_answer_has_no_picture_rather_than_an_error():
    assert picture(np.zeros((3, 4)), np.zeros((0, 3, 4))) is None
    assert picture(np.zeros((3, 4)), np.zeros((3, 0))) is None


def test_the_checks_select_is_drawn_when_the_shapes_agree():
    shot = picture(np.arange(6.0).reshape(2, 3), np.zeros((2, 3)), select="[:, -1]")
    assert shot.expected == [[2.0, 5.0]] and shot.expected_shape == [2]


def test_where_names_each_side_when_they_were_cut_differently():
    shot = picture(np.zeros((3, 80)), np.zeros((2, 3, 80)))
    assert shot.where == "expected: columns 0-63 of 80; yours: batch entry [0], columns 0-63 of 80"


def test_a_select_that_leaves_nothing_has_no_picture():
    assert picture(np.zeros((3, 4, 4)), np.ones((3, 4, 4)), select="[5:]") is None
