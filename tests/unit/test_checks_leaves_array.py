"""leaves-array checks (grading/checks/leaves_array.py) judged on the arrays a script
left, as the fake sandbox's run hands them over (tests/helpers/fake_sandbox.py:
script_context), on the bundled task pe-table-shape (a 5 x 8 table); whether an array was
typed in is read from the source, as grade() reads it.

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

TASK = os.path.join(ROOT, "tasks", "pe-table-shape")
with open(os.path.join(TASK, "reference.py"), encoding="utf-8") as f:
    COMPUTED = f.read()  # (run as a script, the reference is a right submission)


@pytest.fixture(scope="module")
def prepared():
    return prepare(load_task(TASK), use_cache=False)


@pytest.fixture(scope="module")
def table(prepared):
    return prepared.reference.table(5, 8)


def judge(prepared, arrays, source=COMPUTED):
    return run_check(script_context(prepared, "(5, 8)\n", arrays, source), "builds-the-table")


def test_the_table_computed_passes_with_its_points(prepared, table):
    result = judge(prepared, variables(encoding=table))
    assert (result.status, result.score, result.max_score) == (PASSED, 3.0, 3.0)
    assert result.message == "found in variable 'encoding'"


def test_a_table_typed_into_the_file_fails(prepared, table):
    rows = ",\n    ".join("[" + ", ".join(f"{v:.8f}" for v in row) + "]" for row in table)
    typed = f"import numpy as np\n\nencoding = np.array([\n    {rows},\n])\nprint(encoding.shape)\n"
    result = judge(prepared, variables(encoding=table), typed)
    assert (result.status, result.score, result.reason) == (FAILED, 0.0, TYPED_IN)
    assert "variable 'encoding' holds the table, but its values are typed in" in result.message
    assert result.line is not None and 3 <= result.line <= 8


def test_the_table_transposed_fails_saying_so(prepared, table):
    result = judge(prepared, variables(encoding=table.T))
    assert (result.status, result.reason) == (FAILED, MISMATCH)
    assert "variable 'encoding' holds the table transposed, shape (8, 5); it must have shape (5, 8)" in (
        result.message
    )


def test_wrong_values_fail_saying_where_without_the_expected_value(prepared, table):
    wrong = table.copy()
    wrong[2, 3] = 7.0
    result = judge(prepared, variables(encoding=wrong))
    assert result.status == FAILED
    assert "variable 'encoding' has the table's shape (5, 8) but not its values" in result.message
    assert (
        "1 of 40 values are off" in result.message and "at [2, 3], where your script has 7" in result.message
    )
    assert f"{table[2, 3]:.4f}"[:5] not in result.message


def test_no_array_of_the_tables_shape_fails_listing_what_was_computed(prepared):
    result = judge(prepared, variables(n=np.arange(3)))
    assert result.status == FAILED
    assert result.message.startswith("your script never computed the (5, 8) table")
    assert "Arrays your script computed: variable 'n' (3,)." in result.message
    assert judge(prepared, {}).message.endswith("Your script computed no arrays.")
