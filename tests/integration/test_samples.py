"""Every bundled sample gets the verdict it declares: correct ones full marks, each mistake
loses points on the check that names it."""

import os

import pytest
from helpers.paths import PE_SAMPLES, ROOT

from grader.authoring import load_task
from grader.grading.load_check import LOAD_CHECK, RUN_CHECK
from grader.grading.run import GradeOptions, grade
from grader.records.result import ERROR, PASSED
from grader.task.samples import mismatch, read_expectation, sample_files

TASKS = sorted(os.listdir(os.path.join(ROOT, "tasks")))
SAMPLES = [(task, path) for task in TASKS for path in sample_files(os.path.join(ROOT, "submissions", task))]
_tasks = {}


def task_named(name):
    if name not in _tasks:
        _tasks[name] = load_task(os.path.join(ROOT, "tasks", name))
    return _tasks[name]


@pytest.mark.parametrize("task", TASKS)
def test_every_task_has_correct_samples_and_mistakes(task):
    names = [os.path.basename(p) for t, p in SAMPLES if t == task]
    minimum = 10 if task == "positional-encoding" else 3
    assert sum(n.startswith("correct_") for n in names) >= (3 if task == "positional-encoding" else 2)
    assert sum(n.startswith("mistake_") for n in names) >= minimum


@pytest.mark.parametrize("task,path", SAMPLES, ids=[f"{t}/{os.path.basename(p)}" for t, p in SAMPLES])
def test_sample_gets_its_declared_verdict(task, path):
    spec = task_named(task)
    expectation = read_expectation(path)
    assert expectation is not None, f"{path} declares no verdict"
    result = grade(spec, path)
    names = {c.name for c in spec.checks} | {LOAD_CHECK, RUN_CHECK}
    problem = mismatch(expectation, result, names)
    assert problem is None, problem
    if expectation.verdict == "fails":
        by_name = {c.name: c for c in result.checks}
        for name in expectation.checks:
            assert by_name[name].status != PASSED
            assert by_name[name].message, f"{name} failed without saying why"


def test_correct_sample_under_rlimits_tier_too():
    result = grade(
        task_named("positional-encoding"),
        os.path.join(PE_SAMPLES, "correct_vectorized.py"),
        GradeOptions(isolation="rlimits"),
    )
    assert result.status == PASSED
    assert result.isolation == "rlimits"


def test_mistake_under_rlimits_tier_too():
    result = grade(
        task_named("positional-encoding"),
        os.path.join(PE_SAMPLES, "mistake_adds_in_place.py"),
        GradeOptions(isolation="rlimits"),
    )
    by_name = {c.name: c for c in result.checks}
    assert by_name["add-leaves-input-unchanged"].status == "failed"
    assert result.status != ERROR
