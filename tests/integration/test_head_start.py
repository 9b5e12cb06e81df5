"""`grader check` starts its worker before it imports the grading stack (grading/prestart.py): the
grade takes that worker when it was started as the grade would start one, ends it otherwise,
and nothing started ahead outlives the command."""

import os
import shutil

import pytest
from helpers.cli import run_cli
from helpers.paths import PE_SAMPLES, PE_TASK

from grader import sandbox
from grader.authoring import load_task
from grader.grading import prestart as head_start_module
from grader.grading.prestart import head_start
from grader.grading.run import GradeOptions, grade

CORRECT = os.path.join(PE_SAMPLES, "correct_vectorized.py")


@pytest.fixture
def fresh_workers(monkeypatch):
    """The workers started from here on (clear it once the head start has begun)."""
    started = []

    def counted(limits, name):
        started.append(name)
        return sandbox.process.fresh_worker(limits, name)

    monkeypatch.setattr(sandbox, "fresh_worker", counted)
    return started


def test_the_grade_takes_the_worker_started_ahead(plain_tier, fresh_workers):
    options = GradeOptions(isolation=plain_tier)
    with head_start(PE_TASK, options) as started:
        assert started is not None and started.process is not None
        ahead = started.process
        fresh_workers.clear()
        result = grade(load_task(PE_TASK), CORRECT, options, started=started)
        assert started.process is None  # taken
    assert result.score == result.max_score and result.isolation == plain_tier
    assert fresh_workers == []  # no worker but the one started ahead
    assert ahead.exit_status(5) is not None  # ended with the grade's sandbox


def test_a_worker_started_with_other_limits_is_ended_and_not_used(plain_tier, fresh_workers):
    """The task's limits read ahead and the grade's differ (say task.yaml changed between
    the two): the worker started ahead is ended, the grade starts its own."""
    with head_start(PE_TASK, GradeOptions(isolation=plain_tier, limits={"memory_mib": 1024})) as started:
        assert started is not None
        ahead = started.process
        fresh_workers.clear()
        result = grade(load_task(PE_TASK), CORRECT, GradeOptions(isolation=plain_tier), started=started)
        assert ahead.exit_status(5) is not None
    assert result.score == result.max_score
    assert fresh_workers == [plain_tier]


def test_a_worker_no_grade_took_is_ended_on_the_way_out(plain_tier):
    with head_start(PE_TASK, GradeOptions(isolation=plain_tier)) as started:
        assert started is not None
        ahead = started.process
    assert ahead.exit_status(5) is not None


@pytest.mark.parametrize(
    "change",
    ["not: [valid yaml", "- a list, not a mapping", "id: x\nlimits: {memory_mib: [1]}"],
    ids=["broken-yaml", "not-a-mapping", "bad-limits"],
)
def test_a_task_yaml_it_cannot_read_starts_nothing_and_check_says_what_is_wrong(tmp_path, change):
    task = tmp_path / "task"
    shutil.copytree(PE_TASK, task)
    (task / "task.yaml").write_text(change + "\n")
    with head_start(str(task), GradeOptions()) as started:
        assert started is None
    done = run_cli("check", str(task), CORRECT)
    assert done.returncode == 2
    assert "task.yaml" in done.stderr and "Traceback" not in done.stderr


def test_a_task_that_allows_a_framework_is_not_started_ahead(tmp_path, monkeypatch):
    """Its workers preload the frameworks the file imports, known only once it is read."""
    task = tmp_path / "task"
    shutil.copytree(PE_TASK, task)
    text = (task / "task.yaml").read_text()
    (task / "task.yaml").write_text(text + "\nimports:\n  allowed: [numpy, tensorflow]\n")
    monkeypatch.setattr(head_start_module, "start_worker", lambda *a: pytest.fail("a worker was started"))
    with head_start(str(task), GradeOptions()) as started:
        assert started is None


def test_check_grades_as_before_with_the_worker_started_ahead(plain_tier):
    done = run_cli("check", PE_TASK, CORRECT, "--isolation", plain_tier, "--format", "json")
    assert done.returncode == 0, done.stderr
    assert '"status": "passed"' in done.stdout
