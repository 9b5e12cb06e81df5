"""prints checks (grading/checks/script_output.py) judged on what a script printed, as
the fake sandbox's run hands it over (tests/helpers/fake_sandbox.py: script_context), on
the bundled tasks pe-batch-sum (a shape) and pe-row-length (an integer).

One module per kind, named after the kind's module: tests/unit/test_checks_<module>.py.
"""

import os

import pytest
from helpers.fake_sandbox import run_check, script_context
from helpers.paths import ROOT

from grader.authoring import load_task
from grader.grading.prepared import prepare
from grader.records.statuses import FAILED, MISMATCH, PASSED


@pytest.fixture(scope="module")
def shape_task():
    return prepare(load_task(os.path.join(ROOT, "tasks", "pe-batch-sum")), use_cache=False)


@pytest.fixture(scope="module")
def length_task():
    return prepare(load_task(os.path.join(ROOT, "tasks", "pe-row-length")), use_cache=False)


def shape(prepared, printed):
    return run_check(script_context(prepared, printed), "prints-the-shape")


@pytest.mark.parametrize(
    "printed", ["(1, 3, 6)\n", "debug\nmarked.shape=(1, 3, 6)\n", "torch.Size([1, 3, 6])\n"]
)
def test_the_right_shape_printed_last_passes_with_its_points(shape_task, printed):
    result = shape(shape_task, printed)
    assert (result.status, result.score, result.max_score) == (PASSED, 2.0, 2.0)


def test_a_shape_in_the_wrong_order_fails_saying_so(shape_task):
    result = shape(shape_task, "(3, 1, 6)\n")
    assert (result.status, result.score, result.reason) == (FAILED, 0.0, MISMATCH)
    assert result.message.startswith("you printed (3, 1, 6): the right sizes in the wrong order.")


def test_a_wrong_shape_fails_without_giving_the_answer_away(shape_task):
    result = shape(shape_task, "(1, 3, 7)\n")
    assert result.status == FAILED
    assert "reads as (1, 3, 7), which is not the answer" in result.message
    assert "(1, 3, 6)" not in result.message


@pytest.mark.parametrize(
    "printed, said",
    [
        ("", "your script printed nothing; print a shape as its last line."),
        ("(1, 3, 6)\ndone\n", "the last line you printed, 'done', holds no number"),
        (
            "(1, 3, 6) (6, 3, 1)\n",
            "holds several possible answers: (1, 3, 6), (6, 3, 1); print only the answer",
        ),
    ],
)
def test_a_printed_answer_of_the_wrong_shape_fails_saying_what_was_read(shape_task, printed, said):
    result = shape(shape_task, printed)
    assert result.status == FAILED and said in result.message


def test_a_length_is_read_as_one_integer(length_task):
    def length(printed):
        return run_check(script_context(length_task, printed), "prints-the-length")

    assert length("row length: 4\n").status == PASSED
    assert "reads as (5), which is not the answer: print a length" in length("5\n").message
    assert "several possible answers" in length("row 2 has length 4\n").message
