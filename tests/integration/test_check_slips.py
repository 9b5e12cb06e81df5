"""`grader check` answers a student's slips in naming what it grades for the student
(issue 35 B): the two arguments swapped, a folder of kits for one kit, a folder that is no
task; never pointing a student at the task writers' guide."""

import os
import shutil

import pytest
from helpers.cli import run_cli
from helpers.paths import PE_SAMPLES, PE_TASK

GOOD = os.path.join(PE_SAMPLES, "correct_vectorized.py")


@pytest.fixture(scope="module")
def kits(tmp_path_factory):
    """A folder of kits as an instructor hands it out: positional-encoding's kit (grader
    kit) and a second task's folder."""
    out = tmp_path_factory.mktemp("slips") / "kits"
    done = run_cli("kit", PE_TASK, "-o", str(out))
    assert done.returncode == 0, done.stderr
    (out / "softmax").mkdir()
    (out / "softmax" / "task.yaml").write_text("id: softmax\n")
    return out


@pytest.fixture
def solution(tmp_path):
    def named(name):
        path = tmp_path / name
        shutil.copy(GOOD, path)
        return str(path)

    return named


def _slip(*args):
    done = run_cli("check", *args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stdout == "" and "Traceback" not in done.stderr
    assert "task-writers" not in done.stderr  # a student is never sent to the writers' guide
    return done.stderr


def test_swapped_arguments_are_named_with_the_right_order(kits, solution):
    mine, kit = solution("my_solution.py"), str(kits / "positional-encoding")
    said = _slip(mine, kit)
    assert "wrong way round" in said
    assert f"did you mean: grader check {kit} {mine}?" in said.lower()
    assert "task spec has problems" not in said


def test_a_folder_of_kits_gets_did_you_mean_with_its_tasks(kits, solution):
    mine = solution("my_solution.py")
    said = _slip(str(kits), mine)
    assert f"did you mean {kits / 'positional-encoding'}?" in said
    assert str(kits / "softmax") in said  # the candidates are listed
    assert "numgrader" not in said and "README" not in said  # only folders holding task.yaml


def test_a_folder_of_kits_prefers_the_task_the_file_is_named_after(kits, solution):
    said = _slip(str(kits), solution("my_softmax.py"))
    assert f"did you mean {kits / 'softmax'}?" in said
    said = _slip(str(kits), solution("positional_encoding_v2.py"))
    assert f"did you mean {kits / 'positional-encoding'}?" in said


def test_swapped_with_a_folder_of_kits(kits, solution):
    mine = solution("my_softmax.py")
    said = _slip(mine, str(kits))
    assert "wrong way round" in said
    assert f"grader check {kits / 'softmax'} {mine}?" in said


def test_a_folder_that_is_no_task_is_said_for_a_student(tmp_path, solution):
    empty = tmp_path / "not-a-task"
    empty.mkdir()
    said = _slip(str(empty), solution("my_solution.py"))
    assert "is not a task folder" in said and "task.yaml" in said


def test_a_tasks_spec_problems_are_the_writers_to_fix(tmp_path, solution):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "task.yaml").write_text("id: broken\n")
    said = _slip(str(broken), solution("my_solution.py"))
    assert "tell whoever gave you the task" in said


def test_validate_still_points_task_writers_at_their_guide(tmp_path):
    empty = tmp_path / "not-a-task"
    empty.mkdir()
    done = run_cli("validate", str(empty))
    assert done.returncode == 2 and "docs/task-writers.md" in done.stderr
