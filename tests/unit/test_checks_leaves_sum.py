"""leaves-sum checks (grading/checks/leaves_sum.py) judged on the arrays a script left,
as the fake sandbox's run hands them over (tests/helpers/fake_sandbox.py: script_context),
on the bundled task pe-batch-sum: a (1, 3, 6) batch plus the first three rows of a 4 x 6
table.

One module per kind, named after the kind's module: tests/unit/test_checks_<module>.py.
"""

import os

import numpy as np
import pytest
from helpers.fake_sandbox import run_check, script_context, variables
from helpers.paths import ROOT

from grader.authoring import load_task
from grader.grading.prepared import prepare
from grader.records.statuses import FAILED, MISMATCH, PASSED, TYPED_IN

TASK = os.path.join(ROOT, "tasks", "pe-batch-sum")
with open(os.path.join(TASK, "reference.py"), encoding="utf-8") as f:
    COMPUTED = f.read()  # (run as a script, the reference is a right submission)
ONES = np.ones((1, 3, 6))


@pytest.fixture(scope="module")
def prepared():
    return prepare(load_task(TASK), use_cache=False)


@pytest.fixture(scope="module")
def table(prepared):
    return prepared.reference.table(4, 6)


def judge(prepared, arrays, source=COMPUTED):
    return run_check(script_context(prepared, "(1, 3, 6)\n", arrays, source), "adds-the-first-three-rows")


def test_a_batch_plus_the_rows_passes_with_its_points(prepared, table):
    result = judge(prepared, variables(encoding=table, batch=ONES, marked=ONES + table[:3]))
    assert (result.status, result.score, result.max_score) == (PASSED, 3.0, 3.0)
    assert result.message == "variable 'marked' = variable 'batch' + the rows asked for"


def test_other_rows_of_the_table_fail_naming_them(prepared, table):
    result = judge(prepared, variables(encoding=table, batch=ONES, marked=ONES + table[1:4]))
    assert (result.status, result.reason) == (FAILED, MISMATCH)
    assert "variable 'marked' = variable 'batch' + rows 1 to 3 of the (4, 6) table" in result.message
    assert "the exercise asks for rows [:3]" in result.message


def test_a_zero_batch_counts_only_when_the_script_added_the_rows_to_it(prepared, table):
    zeros, rows = np.zeros((1, 3, 6)), table[:3][np.newaxis]
    result = judge(prepared, variables(batch=zeros, marked=rows))
    assert result.status == FAILED and "is all zeros, but your script never added them" in result.message
    # the addition as the worker records it: its operands and result, one record
    added = {
        "`batch` (line 5)": (zeros, "ndarray", "left", 0, True),
        "`rows` (line 5)": (rows, "ndarray", "right", 0, True),
        "`batch + rows` (line 5)": (rows.copy(), "ndarray", "result", 0, True),
    }
    result = judge(prepared, {**variables(batch=zeros, marked=rows), **added})
    assert result.status == PASSED and "(zeros) + the rows asked for" in result.message


def test_a_sum_that_adds_nothing_fails(prepared):
    result = judge(prepared, variables(batch=ONES, marked=ONES.copy()))
    assert result.status == FAILED
    assert "adds nothing: a sum of shape (1, 3, 6) must be a batch plus rows [:3]" in result.message


def test_no_sum_or_no_batch_fails_saying_which(prepared, table):
    result = judge(prepared, variables(encoding=table))
    assert result.status == FAILED
    assert result.message.startswith("your script never computed a sum of shape (1, 3, 6).")
    result = judge(prepared, variables(marked=ONES + table[:3]))
    assert "computed no batch of shape (1, 3, 6)" in result.message


def test_rows_typed_into_the_file_fail(prepared, table):
    rows = ", ".join("[" + ", ".join(f"{v:.8f}" for v in row) + "]" for row in table[:3])
    typed = f"import numpy as np\nbatch = np.ones((1, 3, 6))\nmarked = batch + np.array([{rows}])\n"
    result = judge(prepared, variables(batch=ONES, marked=ONES + table[:3]), typed)
    assert (result.status, result.reason, result.score) == (FAILED, TYPED_IN, 0.0)
    assert "variable 'marked' - variable 'batch' holds the rows asked for, but its values are typed in" in (
        result.message
    )
