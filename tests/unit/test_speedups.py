"""The one switch of the speed-ups (grader/grading/speedups.py): --no-speedups or
$GRADER_NO_SPEEDUPS turns them off, the variable may name some, and each is decided there."""

import dataclasses
import subprocess
import sys

import pytest
from helpers.paths import PE_TASK, ROOT

from grader.cli.common import UsageError, options_from
from grader.cli.parser import build_parser
from grader.grading import speedups
from grader.grading.options import SPEEDUPS, GradeOptions


def test_all_are_on_unless_switched_off():
    assert GradeOptions().speedups == SPEEDUPS == {"head-start", "shrink-lanes", "shrink-cache"}
    assert speedups.chosen_speedups(False, {}) == SPEEDUPS
    assert speedups.chosen_speedups(False, {"GRADER_NO_SPEEDUPS": "0"}) == SPEEDUPS
    assert speedups.chosen_speedups(True, {}) == frozenset()
    assert speedups.chosen_speedups(False, {"GRADER_NO_SPEEDUPS": "1"}) == frozenset()
    assert speedups.chosen_speedups(False, {"GRADER_NO_SPEEDUPS": "shrink-lanes, head-start"}) == {
        "shrink-cache"
    }
    with pytest.raises(ValueError, match="warp is no speed-up"):
        speedups.chosen_speedups(False, {"GRADER_NO_SPEEDUPS": "warp"})


@pytest.mark.parametrize("command", ["check", "batch", "validate", "ci"])
def test_every_command_that_grades_takes_the_flag(command, monkeypatch):
    monkeypatch.delenv("GRADER_NO_SPEEDUPS", raising=False)
    where = {"check": ["t", "f.py"], "batch": ["t", "d"], "validate": ["t"], "ci": []}[command]
    args = build_parser().parse_args([command, *where, "--no-speedups"])
    assert options_from(args).speedups == frozenset()
    assert options_from(build_parser().parse_args([command, *where])).speedups == SPEEDUPS
    monkeypatch.setenv("GRADER_NO_SPEEDUPS", "nope")
    with pytest.raises(UsageError, match="GRADER_NO_SPEEDUPS"):
        options_from(build_parser().parse_args([command, *where]))


def test_each_is_decided_from_the_switch():
    on, off = GradeOptions(shrink_lanes=True), GradeOptions(shrink_lanes=True, speedups=frozenset())
    assert speedups.starts_ahead(on) and not speedups.starts_ahead(off)
    assert speedups.uses_shrink_cache(on) and not speedups.uses_shrink_cache(off)
    assert speedups.uses_shrink_lanes(on, plain_process=False) and not speedups.uses_shrink_lanes(
        off, plain_process=False
    )
    # lanes only for one file in one process, never beside warm workers or a plain process
    assert not speedups.uses_shrink_lanes(GradeOptions(), plain_process=False)
    assert not speedups.uses_shrink_lanes(dataclasses.replace(on, warm_workers=True), plain_process=False)
    assert not speedups.uses_shrink_lanes(on, plain_process=True)


def test_the_disk_caches_keys_are_the_same_in_every_process():
    """A check's repr keys the cases, the reference times and the shrink paths on disk: with
    a function's address in it (a kind's), no later run would find them."""
    code = (
        "from grader.authoring import load_task\n"
        "from grader.grading.shrinking.tree_store import ShrinkStore\n"
        f"task = load_task({PE_TASK!r})\n"
        "print([ShrinkStore(task).folder(c) for c in task.checks], [repr(c) for c in task.checks])\n"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
        ).stdout
        for _ in range(2)
    ]
    assert runs[0] == runs[1] and " at 0x" not in runs[0]
