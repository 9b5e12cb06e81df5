"""Batch progress: plain lines in a CI log (every tenth of the class), a live line on a
terminal, and a last line with the totals."""

import io

from grader.classroom.progress import Progress
from grader.records.result import Result


def _graded(status):
    return Result("t", "s.py", 0.0, 1.0, status, "rlimits")


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_log_gets_a_line_per_tenth_and_the_totals():
    log = io.StringIO()
    progress = Progress(20, log)
    for i in range(20):
        progress.update(_graded("passed" if i % 4 else ("error" if i == 0 else "failed")))
    progress.finish()
    lines = log.getvalue().splitlines()
    assert len(lines) == 11  # ten tenths, then the totals
    assert lines[0].startswith("graded 2/20, ")
    assert lines[-2].startswith("graded 20/20, 5 below full marks, 1 error, ")
    assert lines[-1].startswith("done: 20 graded (") and lines[-1].endswith("5 below full marks, 1 error")
    assert "\r" not in log.getvalue()


def test_a_terminal_gets_one_live_line():
    screen = Terminal()
    progress = Progress(4, screen)
    for _ in range(4):
        progress.update(_graded("passed"))
    progress.finish()
    text = screen.getvalue()
    assert text.count("\r") == 4 and "[" + "#" * 30 + "] graded 4/4" in text
    assert text.rstrip().splitlines()[-1].startswith("done: 4 graded")
