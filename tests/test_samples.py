"""Every bundled sample gets the verdict it declares: correct ones full marks, each mistake
loses points on the check that names it."""
import os

import pytest

from conftest import PE_SAMPLES
from grader.grading import Options, grade
from grader.result import ERROR, PASSED
from grader.samples import mismatch, read_expectation, sample_files

SAMPLES = sample_files(PE_SAMPLES)


def test_there_are_enough_samples():
    names = [os.path.basename(s) for s in SAMPLES]
    assert sum(n.startswith("correct_") for n in names) >= 3
    assert sum(n.startswith("mistake_") for n in names) >= 10


@pytest.mark.parametrize("path", SAMPLES, ids=os.path.basename)
def test_sample_gets_its_declared_verdict(pe_task, path):
    expectation = read_expectation(path)
    assert expectation is not None, f"{path} declares no verdict"
    result = grade(pe_task, path)
    names = {c.name for c in pe_task.checks} | {"loads"}
    assert mismatch(expectation, result, names) is None, mismatch(expectation, result, names)
    if expectation.verdict == "fails":
        by_name = {c.name: c for c in result.checks}
        for name in expectation.checks:
            check = by_name[name]
            assert check.status != PASSED and check.score < check.max_score or name == "loads"
            assert check.message, f"{name} failed without saying why"


def test_correct_sample_under_rlimits_tier_too(pe_task):
    result = grade(pe_task, os.path.join(PE_SAMPLES, "correct_vectorized.py"),
                   Options(isolation="rlimits"))
    assert result.status == PASSED
    assert result.isolation == "rlimits"


def test_mistake_under_rlimits_tier_too(pe_task):
    result = grade(pe_task, os.path.join(PE_SAMPLES, "mistake_adds_in_place.py"),
                   Options(isolation="rlimits"))
    by_name = {c.name: c for c in result.checks}
    assert by_name["add-leaves-input-unchanged"].status == "failed"
    assert result.status != ERROR
