"""Which checks of a student kit wait for final grading (grader/grading/final_grading.py): decided
by the check kinds (``answer_is_private``), not by a list of names."""

import dataclasses

from grader.grading.checks import KINDS
from grader.grading.checks.script_output import PrintsOptions
from grader.grading.checks.script_work import LeavesOptions
from grader.grading.final_grading import decided_later, in_a_kit, not_run
from grader.records.result import PASSED, CheckResult
from grader.records.statuses import FINAL_GRADING
from grader.task.check_kind import CheckOptions
from grader.task.spec import CheckSpec

IMPORTS = CheckSpec("allowed-imports", KINDS["imports"], CheckOptions(), points=1)
PRINTS = CheckSpec("prints-the-shape", KINDS["prints"], PrintsOptions(), points=2)
TABLE = CheckSpec("builds-the-table", KINDS["leaves-array"], LeavesOptions(reference="table"), points=3)
AFTER = dataclasses.replace(PRINTS, name="prints-after-the-table", needs=("builds-the-table",))
LATER = dataclasses.replace(PRINTS, name="after-that", needs=("prints-after-the-table",))


def test_the_kinds_that_keep_their_expected_values_private():
    assert {name for name, kind in KINDS.items() if kind.answer_is_private()} == {
        "leaves-array",
        "leaves-sum",
    }


def test_a_work_check_what_needs_it_and_a_policy_check_hanging_on_it_wait():
    later = in_a_kit([IMPORTS, PRINTS, TABLE, AFTER, LATER])
    assert set(later) == {"builds-the-table", "prints-after-the-table", "after-that", "allowed-imports"}
    assert not later["builds-the-table"].runs and not later["after-that"].runs
    assert "needs 'builds-the-table'" in later["prints-after-the-table"].why
    assert later["allowed-imports"].runs  # its verdict is shown, its point decided later
    assert in_a_kit([IMPORTS, PRINTS]) == {}


def test_their_lines_are_outside_the_kit_score_with_their_points():
    later = in_a_kit([IMPORTS, PRINTS, TABLE])
    skipped = not_run(TABLE, later["builds-the-table"])
    assert (skipped.status, skipped.reason, skipped.score, skipped.max_score, skipped.final_points) == (
        "skipped",
        FINAL_GRADING,
        0.0,
        0.0,
        3,
    )
    assert skipped.message.startswith("checked at final grading (3 points, not in this kit's score)")
    shown = decided_later(CheckResult("allowed-imports", PASSED, 1.0, 1.0), later["allowed-imports"])
    assert (shown.status, shown.score, shown.max_score, shown.final_points) == (PASSED, 0.0, 0.0, 1)
    assert "Its 1 point is decided at final grading" in shown.message
