"""The prepared task: built once, carried by grading, handed to a batch's pool processes; what
depends on the task alone (the policy's one-fill table) read from the freeze."""

import json
import os
import shutil

import pytest
from helpers.cli import run_cli
from helpers.paths import PE_SAMPLES, PE_TASK

from grader.authoring import load_task
from grader.cases import freeze_files as frozen
from grader.classroom import executors
from grader.grading import mistakes, policy
from grader.grading.prepared import PreparedTask, prepare
from grader.grading.run import GradeOptions, grade
from grader.task.spec import SpecError

COMPARED_AS_VALUES = "odd-width-last-column-zero"  # one repeated value (0) passes it


def test_the_freeze_holds_the_one_fill_table_and_grading_reads_it(monkeypatch):
    task = load_task(PE_TASK)
    freeze = frozen.load_freeze(task)
    assert freeze is not None and COMPARED_AS_VALUES in (freeze.one_fill or ())

    def sorted_again(*args, **kwargs):
        raise AssertionError("the one-fill table was computed again, not read from the freeze")

    monkeypatch.setattr("grader.grading.prepared.one_fill_checks", sorted_again)
    prepared = PreparedTask.of(task)
    assert prepared.one_fill_checks() == freeze.one_fill
    result = grade(task, os.path.join(PE_SAMPLES, "correct_vectorized.py"), GradeOptions(), prepared)
    assert result.score == result.max_score


def test_the_frozen_table_is_the_one_the_expected_outputs_give():
    """The table written at `grader freeze` is what the policy finds from the outputs."""
    task = load_task(PE_TASK)
    prepared = PreparedTask.of(task)
    found = policy.one_fill_checks(task.checks, lambda check: prepared.check_cases(check).expected)
    assert found == prepared.freeze.one_fill


def test_a_freeze_from_before_the_table_still_grades(tmp_path):
    """A freeze without the table (an older grader's) is current: the table is found when
    the task is prepared, and the score is the same."""
    task_folder = tmp_path / "task"
    shutil.copytree(PE_TASK, task_folder)
    cases_path = task_folder / "frozen" / "cases.json"
    data = json.loads(cases_path.read_bytes())
    del data["one_fill"]
    old = json.dumps(data, sort_keys=True, indent=1).encode()
    cases_path.write_bytes(old)
    manifest_path = task_folder / "frozen" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["cases_sha256"] = frozen.sha256(old)
    arrays = sorted({n for e in data["checks"].values() for n in e.get("arrays", [])})
    manifest["digest"] = frozen.digest_of(
        manifest["spec_sha256"], manifest["reference_sha256"], manifest["cases_sha256"], arrays
    )
    manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True))
    task = load_task(str(task_folder))
    prepared = PreparedTask.of(task)
    assert prepared.freeze.one_fill is None
    assert COMPARED_AS_VALUES in prepared.one_fill_checks()
    done = run_cli("check", str(task_folder), os.path.join(PE_SAMPLES, "correct_vectorized.py"))
    assert done.returncode == 0, done.stderr[-2000:]


def test_an_edited_one_fill_table_makes_the_freeze_stale(tmp_path):
    """The table counts points: edited by hand (say, in a kit), the freeze is refused."""
    task_folder = tmp_path / "task"
    shutil.copytree(PE_TASK, task_folder)
    cases_path = task_folder / "frozen" / "cases.json"
    data = json.loads(cases_path.read_bytes())
    data["one_fill"] = []
    cases_path.write_bytes(json.dumps(data, sort_keys=True, indent=1).encode())
    with pytest.raises(SpecError) as caught:
        frozen.load_freeze(load_task(str(task_folder)))
    assert "cases.json: changed since it was written" in " ".join(caught.value.problems)


def _probe(key):
    """Run in a pool process: the prepared task it grades with, as it was handed."""
    found = executors._prepared.get(key)
    return None if found is None else found._values.get("probe")


def test_a_pool_process_grades_with_the_task_the_batch_prepared():
    task = load_task(PE_TASK)
    prepared = prepare(task, profile_mistakes=False)
    prepared._values["probe"] = "prepared by the batch"  # (only the parent's object has it)
    pool = executors.LocalExecutor(1, prepared)
    try:
        seen = pool.pool.submit(_probe, (task.folder, task.digest)).result(timeout=60)
    finally:
        pool.close()
    assert seen == "prepared by the batch"


def test_preparing_twice_builds_two_objects_that_agree():
    """Nothing is kept between two preparations (no module cache): each holds the same cases."""
    task = load_task(PE_TASK)
    first, second = PreparedTask.of(task), PreparedTask.of(task)
    check = next(c for c in task.checks if c.call is not None)
    assert first.case_set(check) is not second.case_set(check)
    assert len(first.case_set(check).cases) == len(second.case_set(check).cases)
    assert first.case_set(check) is first.case_set(check)


# --------------------------------------------------------------------------- the mistakes' profile

SWAPPED = os.path.join(PE_SAMPLES, "mistake_sin_cos_swapped.py")


def test_the_freeze_holds_the_mistakes_profile_and_a_diagnosis_reads_it(monkeypatch):
    """Which checks each known mistake fails is found at `grader freeze`: a diagnosis of one
    file runs no mistake on a whole case set, and names the same mistake."""
    task = load_task(PE_TASK)
    freeze = frozen.load_freeze(task)
    assert freeze is not None and freeze.mistakes is not None
    assert set(freeze.mistakes["fails"]) == {m.name for m in task.mistakes}

    def judged_again(*args, **kwargs):
        raise AssertionError("a mistake was judged on a case set: the profile was not read")

    monkeypatch.setattr(mistakes.MistakeRuns, "judged_ok", judged_again)
    prepared = prepare(task, profile_mistakes=False)
    assert prepared.profile() == freeze.mistakes["fails"]
    result = grade(task, SWAPPED, GradeOptions(), prepared)
    assert [d.mistake for d in result.diagnoses] == ["sin-cos-swapped"]


def test_the_kept_profile_is_what_the_mistakes_give():
    task = load_task(PE_TASK)
    prepared = PreparedTask.of(task)
    found = mistakes.MistakeRuns(task, mistakes.variants(task)).profile(prepared.check_cases)
    assert found == prepared.freeze.mistakes["fails"]


def test_a_profile_kept_for_another_mistakes_py_is_not_taken(tmp_path):
    """mistakes.py edited since the freeze (no refreeze needed: a diagnosis changes no
    score): its profile is found anew, and the new mistake is what is diagnosed."""
    task_folder = tmp_path / "task"
    shutil.copytree(PE_TASK, task_folder)
    source = (task_folder / "mistakes.py").read_text()
    (task_folder / "mistakes.py").write_text(source + "\n\n# edited after the freeze\n")
    task = load_task(str(task_folder))
    prepared = PreparedTask.of(task)
    assert not prepared.mistakes.failing  # nothing taken from the freeze
    result = grade(task, SWAPPED, GradeOptions(), prepare(task, profile_mistakes=False))
    assert [d.mistake for d in result.diagnoses] == ["sin-cos-swapped"]


def test_grader_freeze_writes_the_profile(tmp_path):
    task_folder = tmp_path / "task"
    shutil.copytree(PE_TASK, task_folder, ignore=shutil.ignore_patterns("frozen"))
    done = run_cli("freeze", str(task_folder))
    assert done.returncode == 0, done.stderr
    task = load_task(str(task_folder))
    prepared = PreparedTask.of(task)
    kept = prepared.freeze.mistakes
    assert kept["file_sha256"] == mistakes.file_sha256(task.mistakes_path)
    assert kept["fails"] == mistakes.MistakeRuns(task, mistakes.variants(task)).profile(prepared.check_cases)
