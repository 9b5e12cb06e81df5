"""A class's shrinks as one tree (shrink_traces.py): a submission graded after classmates
is sent exactly what it would be sent alone, in the same order, and is shown the same
smallest failing input; only Hypothesis's own work is saved."""

import hashlib
import os
import shutil

import pytest
from conftest import PE_SAMPLES

import grader.task.hypothesis_driver as hypothesis_driver
from grader.grading.grade import grade
from grader.grading.prepared import prepare
from grader.sandbox.launcher import Sandbox


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
    explore = hypothesis_driver.explore

    def counted(*args, **kwargs):
        count[0] += 1
        return explore(*args, **kwargs)

    monkeypatch.setattr(hypothesis_driver, "explore", counted)
    return count


def _feedback(result):
    return [(c.name, c.status, c.score, c.message, c.failing_input) for c in result.checks]


def test_a_submission_is_sent_and_shown_the_same_whoever_was_graded_before(
    pe_task, tmp_path, sent, shrinks_run
):
    first = os.path.join(PE_SAMPLES, "mistake_positions_from_one.py")
    same_mistake = shutil.copy(first, tmp_path / "classmate.py")  # another file, the same outcomes
    other_mistake = os.path.join(PE_SAMPLES, "mistake_exponent_missing_two.py")

    alone = prepare(pe_task)
    sent.clear()
    by_itself = grade(pe_task, same_mistake, prepared=alone)
    sent_alone = list(sent)
    assert by_itself.score < by_itself.max_score and shrinks_run[0] > 0

    in_class = prepare(pe_task)
    grade(pe_task, other_mistake, prepared=in_class)
    grade(pe_task, first, prepared=in_class)
    sent.clear()
    shrinks_run[0] = 0
    after_classmates = grade(pe_task, same_mistake, prepared=in_class)

    assert sent == sent_alone  # the same inputs, in the same order, none twice
    assert _feedback(after_classmates) == _feedback(by_itself)
    assert shrinks_run[0] == 0  # every shrink walked a classmate's path to its end


def test_a_different_mistake_walks_the_tree_only_as_far_as_it_agrees(pe_task, sent, shrinks_run):
    other_mistake = os.path.join(PE_SAMPLES, "mistake_exponent_missing_two.py")
    alone = prepare(pe_task)
    sent.clear()
    by_itself = grade(pe_task, other_mistake, prepared=alone)
    sent_alone = list(sent)

    in_class = prepare(pe_task)
    grade(pe_task, os.path.join(PE_SAMPLES, "mistake_positions_from_one.py"), prepared=in_class)
    sent.clear()
    shrinks_run[0] = 0
    after_classmate = grade(pe_task, other_mistake, prepared=in_class)

    assert sent == sent_alone
    assert _feedback(after_classmate) == _feedback(by_itself)
    assert shrinks_run[0] > 0  # its own failures were shrunk by Hypothesis, from where they part
