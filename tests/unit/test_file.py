"""What a submission file may be: the refusals of special files, in process (the same files
in a class folder or on Gradescope: tests/security/test_hostile_submissions.py)."""

import os
import stat

import pytest
from helpers.paths import PE_SAMPLES

CORRECT = os.path.join(PE_SAMPLES, "correct_vectorized.py")


def test_special_file_kinds_are_named(tmp_path):
    """Unit: what each refusal says (no sandbox involved)."""
    from grader.submission.file import SubmissionError, read_submission

    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    with pytest.raises(SubmissionError, match="FIFO"):
        read_submission(str(fifo))
    link = tmp_path / "link.py"
    link.symlink_to(CORRECT)
    with pytest.raises(SubmissionError, match="symbolic link"):
        read_submission(str(link))
    assert stat.S_ISREG(os.stat(CORRECT).st_mode)
    assert read_submission(CORRECT).data == open(CORRECT, "rb").read()


# --------------------------------------------------------------------------- a named file of a folder
# (grader check --file NAME: the file Gradescope's run_autograder grades for one task)


def test_a_named_file_is_read_as_any_hand_in(tmp_path):
    from grader.submission.file import MAX_SOURCE_BYTES, SubmissionError, read_named

    upload = tmp_path / "submission"
    upload.mkdir()
    (upload / "table_shape.py").write_text("print((5, 8))\n")
    (upload / "batch_sum.py").symlink_to(CORRECT)  # a link, even to a readable file
    (upload / "row_length.py").mkdir()  # a folder named like a task's file
    (upload / "huge.py").write_bytes(b"#" * (MAX_SOURCE_BYTES + 1))
    assert read_named(str(upload), "table_shape.py").data == b"print((5, 8))\n"
    with pytest.raises(SubmissionError, match="symbolic link"):
        read_named(str(upload), "batch_sum.py")
    with pytest.raises(SubmissionError, match="is a folder"):
        read_named(str(upload), "row_length.py")
    with pytest.raises(SubmissionError, match="larger than"):
        read_named(str(upload), "huge.py")


def test_a_missing_named_file_says_which_and_what_was_handed_in(tmp_path):
    from grader.submission.file import NAMED_LISTED, SubmissionError, read_named

    upload = tmp_path / "submission"
    upload.mkdir()
    (upload / "Table_Shape.py").write_text("")
    (upload / "row\x1b[2Jlength.py").write_text("")
    with pytest.raises(SubmissionError) as caught:
        read_named(str(upload), "table_shape.py")
    message = str(caught.value)
    assert message.startswith("no file named table_shape.py was handed in")
    assert "Table_Shape.py" in message and "row\\x1b[2Jlength.py" in message and "\x1b" not in message
    for i in range(2 * NAMED_LISTED):
        (upload / f"f{i:02}.py").write_text("")
    with pytest.raises(SubmissionError, match=rf"and {NAMED_LISTED + 2} more\."):
        read_named(str(upload), "table_shape.py")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SubmissionError, match="holds no file"):
        read_named(str(empty), "table_shape.py")


@pytest.mark.parametrize(
    "name",
    ["../table_shape.py", "sub/table_shape.py", ".hidden.py", "my file.py", "notes.txt", "a\x1b.py", ""],
)
def test_a_named_file_is_a_plain_name_with_a_hand_in_suffix(tmp_path, name):
    from grader.submission.file import SubmissionError, name_problem, read_named

    assert name_problem(name)
    with pytest.raises(SubmissionError):
        read_named(str(tmp_path), name)
    assert name_problem("table_shape.py") is None and name_problem("Homework-3.ipynb") is None
