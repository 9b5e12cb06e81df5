"""What a submission file may be: the refusals of special files, in process (the same files
in a class folder or on Gradescope: tests/security/test_hostile_submissions.py)."""

import os
import stat

import pytest
from conftest import PE_SAMPLES

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
