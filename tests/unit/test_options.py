"""Which tier a grade runs in (grader/grading/options.py: tier_for, the kit rule included):
unsandboxed only for a kit, holding nothing of the instructor's, checked by its own student."""

import os
import shutil

import pytest
from helpers.paths import COURSE, INSTRUCTOR_TASKS, PE_TASK

from grader.authoring import load_task
from grader.grading.options import GradeOptions, is_kit, kit_at_home, tier_for
from grader.sandbox import SandboxUnavailable

KIT = os.path.join(COURSE, "tasks", "normalize-rows")


def test_a_kit_holds_nothing_of_the_instructors_and_a_full_task_is_never_one(tmp_path):
    assert is_kit(load_task(KIT))
    assert not is_kit(load_task(os.path.join(INSTRUCTOR_TASKS, "normalize-rows")))  # reference, hidden
    assert not is_kit(load_task(PE_TASK))  # a reference and known mistakes
    # A kit folder that holds a reference after all (dropped in, or named elsewhere) is not one.
    shutil.copytree(KIT, tmp_path / "kit")
    (tmp_path / "kit" / "reference.py").write_text("def normalize_rows(m):\n    return m\n")
    assert not is_kit(load_task(str(tmp_path / "kit")))
    # ... nor a kit's task.yaml given a hidden check.
    shutil.copytree(KIT, tmp_path / "hidden")
    spec = tmp_path / "hidden" / "task.yaml"
    spec.write_text(spec.read_text().replace("  points: 2\n", "  points: 2\n  hidden: true\n", 1))
    assert any(c.hidden for c in load_task(str(tmp_path / "hidden")).checks)
    assert not is_kit(load_task(str(tmp_path / "hidden")))


def test_only_a_students_own_check_of_a_kit_may_be_graded_unsandboxed():
    kit = load_task(KIT)
    assert kit_at_home(kit, GradeOptions(own_machine=True))
    assert not kit_at_home(kit, GradeOptions())  # batch, validate, a new command: never unless it says so
    assert not kit_at_home(kit, GradeOptions(own_machine=True, others_work=True))
    assert not kit_at_home(load_task(PE_TASK), GradeOptions(own_machine=True))


def test_tier_for_takes_the_unsandboxed_tier_only_for_a_students_own_kit(tmp_path):
    """What a student's check of a kit may ask (--isolation unsandboxed) and what a grade of
    someone else's work, or of a full task, may not: the same request, told apart by the
    task and the options alone."""
    kit_folder = str(tmp_path / "kit")
    shutil.copytree(os.path.join(COURSE, "tasks", "normalize-rows"), kit_folder)
    kit = load_task(kit_folder)
    asked = dict(isolation="unsandboxed")
    assert tier_for(GradeOptions(**asked, own_machine=True), kit) == "unsandboxed"
    for options, task in (
        (GradeOptions(**asked, own_machine=True, others_work=True), kit),  # Gradescope's check
        (GradeOptions(**asked), kit),  # batch, validate: never unless the command says so
        (GradeOptions(**asked, own_machine=True), load_task(PE_TASK)),  # a full task
        (GradeOptions(**asked, own_machine=True), None),  # no task read yet (the head start)
    ):
        with pytest.raises(SandboxUnavailable):
            tier_for(options, task)
