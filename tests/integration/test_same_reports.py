"""The speed-ups change no report (grader/grading/speedups.py): a few samples of
positional-encoding graded with them on and with them off (`$GRADER_NO_SPEEDUPS=1`) give the
same bytes in every format, `grader batch`'s files included, but for the seconds a grade took.
bench/same_reports.py runs the same comparison over every bundled sample, and against another
checkout of the grader."""

import importlib.util
import os
import shutil

from helpers.paths import PE_SAMPLES, ROOT

_spec = importlib.util.spec_from_file_location("same_reports", os.path.join(ROOT, "bench", "same_reports.py"))
assert _spec is not None and _spec.loader is not None
same_reports = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(same_reports)

# a right file, a wrong one that fails 14 checks (its shrinks in two lanes), a copy of it (a
# class's second such file walks the first's shrink paths), and another mistake
SAMPLES = {
    "correct_vectorized.py": "correct_vectorized.py",
    "mistake_sin_cos_swapped.py": "mistake_sin_cos_swapped.py",
    "mistake_sin_cos_swapped_again.py": "mistake_sin_cos_swapped.py",
    "mistake_exponent_missing_two.py": "mistake_exponent_missing_two.py",
}


def test_the_reports_are_the_same_with_the_speedups_off(tmp_path):
    work = str(tmp_path)
    shutil.copytree(
        os.path.join(ROOT, "tasks", "positional-encoding"), os.path.join(work, "tasks", "positional-encoding")
    )
    os.makedirs(os.path.join(work, "submissions", "positional-encoding"))
    for name, sample in SAMPLES.items():
        shutil.copy(
            os.path.join(PE_SAMPLES, sample), os.path.join(work, "submissions", "positional-encoding", name)
        )
    on = same_reports.reports(ROOT, work, ["positional-encoding"], 2, speedups=True)
    off = same_reports.reports(ROOT, work, ["positional-encoding"], 2, speedups=False)
    assert len(on) == 2 * 5 + 2 + 4 * 5 + 4 + 4  # checks, renders of their json; the batch's files
    assert same_reports.round_trips(on) + same_reports.round_trips(off) == []
    assert same_reports.differences(on, off) == []
