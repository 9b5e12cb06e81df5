"""Script tasks: the printed answer is read by the documented rule (in process; the
scripts themselves run in tests/integration/test_script_tasks.py)."""
import pytest

from grader.checks.script_output import read_answer


@pytest.mark.parametrize("printed", [
    "(5, 8)", "[5, 8]", "5 8", "TensorShape([5, 8])", "torch.Size([5, 8])",
    "tf.Tensor([5 8], shape=(2,), dtype=int32)", "debug: building\nshape is (5, 8)\n",
    "(5, 8)\n\n   \n",
])
def test_shape_answers_are_read_leniently(printed):
    assert read_answer(printed)[1] == [5, 8]


@pytest.mark.parametrize("printed", ["4", "(4,)", "torch.Size([4])", "length: 4",
                                     "tf.Tensor(4, shape=(), dtype=int32)"])
def test_length_answers(printed):
    assert read_answer(printed)[1] == [4]


def test_only_the_last_line_counts_and_nothing_is_nothing():
    assert read_answer("(5, 8)\n(4, 6)")[1] == [4, 6]
    assert read_answer("") is None and read_answer("\n \n") is None
    assert read_answer("[[1.5e-02 2.0e+00]]")[1] == [0.015, 2.0]
