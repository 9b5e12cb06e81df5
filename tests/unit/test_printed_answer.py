"""Script tasks: the printed answer is read by the documented rule (printed_answer.py, in
process; the scripts themselves run in tests/integration/test_script_tasks.py)."""

import pytest

from grader.grading.checks.printed_answer import read_answer


def candidates(printed, format="shape"):
    return read_answer(printed, format).candidates


@pytest.mark.parametrize(
    "printed",
    [
        "(5, 8)",
        "[5, 8]",
        "5 8",
        "TensorShape([5, 8])",
        "torch.Size([5, 8])",
        "tf.Tensor([5 8], shape=(2,), dtype=int32)",
        "debug: building\nshape is (5, 8)\n",
        "(5, 8)\n\n   \n",
    ],
)
def test_shape_answers_are_read_leniently(printed):
    assert candidates(printed) == ((5, 8),)


@pytest.mark.parametrize(
    "printed",
    [
        "table.shape=(5, 8)",  # print(f"{table.shape=}")
        "table.shape = (5, 8)",  # print(f"{table.shape = }")
        "shape=(5, 8)",
        "shape: (5, 8)",
        "Shape of table is (5, 8)",
        "The shape is: (5, 8)",
        "x2.shape=(5, 8)",  # a digit inside a word is no number
        "table.shape=(5, 8) table.dtype=dtype('float64')",
        "encoding.shape=(5, 8) ... [5, 8]",  # equal candidates are one answer
        "TensorShape([Dimension(5), Dimension(8)])",
        "tensor([5, 8], device='cuda:0')",
        "array([5, 8], dtype=int64)",
        "5x8",
        "5 x 8",
        "float32 table of 5 8",
    ],
)
def test_shapes_in_the_common_printing_forms(printed):
    assert candidates(printed) == ((5, 8),)


@pytest.mark.parametrize(
    "printed",
    [
        "8",
        "(8,)",
        "len(row) = 8",
        "len(row)=8",
        "row length: 8",
        "torch.Size([8])",
        "tf.Tensor(8, shape=(), dtype=int32)",
        "len(encoding[2])=8",
        "encoding[2].shape=(8,)",
        "Length of row 2: 8",
    ],
)
def test_lengths_in_the_common_printing_forms(printed):
    assert candidates(printed, "integer") == ((8,),)


@pytest.mark.parametrize(
    "printed, format, expected",
    [
        ("(5, 8) (8, 5)", "shape", ((5, 8), (8, 5))),
        ("shape (5, 8) or [8, 5]", "shape", ((5, 8), (8, 5))),
        ("row 0 has length 8", "integer", ((0,), (8,))),
        ("2 8", "integer", ((2,), (8,))),
        # a bare number beside a bracket group with another number: two answers, never a pick
        ("Length: 4 (row 2)", "integer", ((2,), (4,))),
        ("row 2 has shape (8,)", "integer", ((8,), (2,))),
        ("shape (5, 8) for 5 steps", "shape", ((5, 8), (5,))),
    ],
)
def test_several_different_candidates_are_all_reported(printed, format, expected):
    assert candidates(printed, format) == expected


def test_a_shape_from_bare_numbers_is_one_candidate_a_length_from_each():
    assert candidates("rows 5 columns 8") == ((5, 8),)
    assert candidates("rows 5 columns 8", "integer") == ((5,), (8,))


@pytest.mark.parametrize("printed", ["shape:", "float32", "x.shape=", "len(row)", "nan"])
def test_words_and_labels_alone_hold_no_number(printed):
    assert candidates(printed) == ()


def test_only_the_last_line_counts_and_nothing_is_nothing():
    assert candidates("(5, 8)\n(4, 6)") == ((4, 6),)
    assert read_answer("", "shape") is None and read_answer("\n \n", "integer") is None
    assert candidates("[[1.5e-02 2.0e+00]]") == ((0.015, 2.0),)
    assert candidates("(1e999, 8)") == ((float("inf"), 8),)


def test_brackets_that_do_not_match_are_read_without_crashing():
    assert candidates("(5, 8") == ((5, 8),)
    assert candidates("5, 8))]") == ((5, 8),)
    assert candidates("((([") == ()
    assert candidates("(" * 450 + "5") == ((5,),)  # nested as deep as a line allows
    assert candidates("(" * 10000 + "5") == ()  # the rest of a long line is not read


def test_the_line_is_data_never_evaluated():
    printed = "__import__('os').system('echo pwned') or (5, 8)"
    assert candidates(printed) == ((5, 8),)


@pytest.mark.parametrize(
    "printed",
    [
        "\x1b[32m(5, 8)\x1b[0m",  # a colour code, raw
        "\\x1b[1;32m(5, 8)\\x1b[0m",  # as the captured output shows it
        "\x1b]0;title\x07shape: (5, 8)",
    ],
)
def test_terminal_escape_sequences_are_removed_before_reading(printed):
    assert candidates(printed) == ((5, 8),)


@pytest.mark.parametrize("printed", ["\uff15", "\u0665", "\U0001d7d3", "(\uff15, \u0668)"])
def test_only_ascii_digits_are_numbers(printed):
    assert candidates(printed, "integer") == ()
