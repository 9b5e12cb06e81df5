"""A class's shrinks as one tree (grading/shrinking/tree.py): a submission graded after classmates
is sent exactly what it would be sent alone, in the same order, and is shown the same
smallest failing input; only Hypothesis's own work is saved."""

import hashlib
import os
import shutil

import pytest
from helpers.paths import PE_SAMPLES

import grader.task.hypothesis_driver as hypothesis_driver
from grader.grading.prepared import prepare
from grader.grading.run import grade
from grader.sandbox.launcher import Sandbox


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    """Each test its own cache: the shrink paths on disk are shared by whoever uses one."""
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def sent(monkeypatch):
    """Every call the sandbox is asked to make, as (function, a digest of its arguments)."""
    log: list[tuple[str, str]] = []
    calls = Sandbox.calls

    def logged(self, function, items, *args, **kwargs):
        for positional, keywords in items:
            digest = hashlib.sha256(repr((positional, sorted(keywords.items()))).encode()).hexdigest()
            log.append((function, digest))
        return calls(self, function, items, *args, **kwargs)

    monkeypatch.setattr(Sandbox, "calls", logged)
    return log


@pytest.fixture
def shrinks_run(monkeypatch):
    """How many times Hypothesis itself was asked to shrink."""
    count = [0]
    run = hypothesis_driver.Explorer.run

    def counted(*args, **kwargs):
        count[0] += 1
        return run(*args, **kwargs)

    monkeypatch.setattr(hypothesis_driver.Explorer, "run", counted)
    return count


def _feedback(result):
    return [(c.name, c.status, c.score, c.message, c.failing_input) for c in result.checks]


def test_a_submission_is_sent_and_shown_the_same_whoever_was_graded_before(
    pe_task, tmp_path, monkeypatch, sent, shrinks_run
):
    first = os.path.join(PE_SAMPLES, "mistake_positions_from_one.py")
    same_mistake = shutil.copy(first, tmp_path / "classmate.py")  # another file, the same outcomes
    other_mistake = os.path.join(PE_SAMPLES, "mistake_exponent_missing_two.py")

    alone = prepare(pe_task)
    sent.clear()
    by_itself = grade(pe_task, same_mistake, prepared=alone)
    sent_alone = list(sent)
    assert by_itself.score < by_itself.max_score and shrinks_run[0] > 0
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "class-cache"))  # (not alone's paths)

    in_class = prepare(pe_task)
    grade(pe_task, other_mistake, prepared=in_class)
    grade(pe_task, first, prepared=in_class)
    sent.clear()
    shrinks_run[0] = 0
    after_classmates = grade(pe_task, same_mistake, prepared=in_class)

    assert sent == sent_alone  # the same inputs, in the same order, none twice
    assert _feedback(after_classmates) == _feedback(by_itself)
    assert shrinks_run[0] == 0  # every shrink walked a classmate's path to its end


def test_a_different_mistake_walks_the_tree_only_as_far_as_it_agrees(
    pe_task, tmp_path, monkeypatch, sent, shrinks_run
):
    other_mistake = os.path.join(PE_SAMPLES, "mistake_exponent_missing_two.py")
    alone = prepare(pe_task)
    sent.clear()
    by_itself = grade(pe_task, other_mistake, prepared=alone)
    sent_alone = list(sent)
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "class-cache"))

    in_class = prepare(pe_task)
    grade(pe_task, os.path.join(PE_SAMPLES, "mistake_positions_from_one.py"), prepared=in_class)
    sent.clear()
    shrinks_run[0] = 0
    after_classmate = grade(pe_task, other_mistake, prepared=in_class)

    assert sent == sent_alone
    assert _feedback(after_classmate) == _feedback(by_itself)
    assert shrinks_run[0] > 0  # its own failures were shrunk by Hypothesis, from where they part


def test_paths_kept_on_disk_are_walked_by_the_next_process(pe_task, tmp_path, shrinks_run):
    """A batch's pool processes, and the next run, share the shrinks through the cache."""
    mistake = os.path.join(PE_SAMPLES, "mistake_positions_from_one.py")
    classmate = shutil.copy(mistake, tmp_path / "classmate.py")

    first = grade(pe_task, mistake, prepared=prepare(pe_task))
    kept = list((tmp_path / "cache" / "shrink-paths").rglob("*.frame"))
    assert kept and shrinks_run[0] > 0

    shrinks_run[0] = 0
    later = grade(pe_task, classmate, prepared=prepare(pe_task))  # another process, as it were
    assert shrinks_run[0] == 0
    assert _feedback(later) == _feedback(first)


def test_a_damaged_or_foreign_path_on_disk_is_passed_over(pe_task, tmp_path, shrinks_run):
    mistake = os.path.join(PE_SAMPLES, "mistake_positions_from_one.py")
    first = grade(pe_task, mistake, prepared=prepare(pe_task))
    kept = sorted((tmp_path / "cache" / "shrink-paths").rglob("*.frame"))
    kept[0].write_bytes(kept[0].read_bytes()[:-7])  # cut short
    kept[1].write_bytes(b"GRDR" + os.urandom(64))  # not a frame at all
    target = kept[2].parent / "elsewhere.frame"
    kept[2].rename(target)
    kept[2].symlink_to(target)  # a link is not followed

    shrinks_run[0] = 0
    again = grade(pe_task, mistake, prepared=prepare(pe_task))
    assert _feedback(again) == _feedback(first)
    assert shrinks_run[0] >= 2  # the two unreadable paths' checks were shrunk by Hypothesis again
