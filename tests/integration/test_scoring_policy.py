"""What a score pays for. A file that does nothing scores 0: the checks of how the work is
done (imports, inputs left alone) count only when some of the work is done. One mistake,
one deduction: a float32 table loses the precision check's point and nothing else."""

import json
import os

import pytest
from helpers.cli import run_cli
from helpers.paths import PE_SAMPLES, PE_TASK, ROOT
from helpers.tasks import score_without, write

IDLE_WORDS = "counts only when your file does some of the work"
SHORT = ("--call-seconds", "1", "--submission-seconds", "2")


def _report(task, path, *extra):
    done = run_cli("check", task, str(path), "--format", "json", *SHORT, *extra)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def _checks(report):
    return {c["name"]: c for c in report["checks"]}


@pytest.mark.parametrize("source", ["", "while True:\n    pass\n"], ids=["empty", "loops at import"])
def test_a_file_that_does_nothing_scores_0_and_is_told_why(tmp_path, source):
    path = tmp_path / "nothing.py"
    path.write_text(source)
    report = _report(PE_TASK, path)
    assert report["score"] == 0.0 and report["max_score"] == score_without()
    imports = _checks(report)["numpy-only"]
    assert (imports["status"], imports["score"], imports["reason"]) == ("skipped", 0.0, "idle")
    assert IDLE_WORDS in imports["message"] and "no check of what it computes passed" in imports["message"]


def test_functions_that_return_garbage_get_no_policy_point(tmp_path):
    """They import nothing forbidden and leave x alone, and do none of the work: only the
    return-type checks (which an empty array passes) pay."""
    path = write(
        tmp_path / "garbage.py",
        """
        import numpy as np

        def sinusoidal_pe(max_len, d_model, base=10000.0):
            return np.zeros(1)

        def add_positional_encoding(x, base=10000.0):
            return x.copy()
        """,
    )
    checks = _checks(_report(PE_TASK, path))
    for name in ("numpy-only", "add-leaves-input-unchanged"):
        assert (checks[name]["status"], checks[name]["reason"]) == ("skipped", "idle"), checks[name]
    assert "add_positional_encoding does some of the work" in checks["add-leaves-input-unchanged"]["message"]
    assert {n for n, c in checks.items() if c["score"] > 0} == {
        "table-returns-float-array",
        "add-returns-float-array",
    }


def test_an_empty_script_scores_0(tmp_path):
    path = tmp_path / "empty.py"
    path.write_text("")
    report = _report(os.path.join(ROOT, "tasks", "pe-table-shape"), path)
    assert report["score"] == 0.0
    assert _checks(report)["allowed-imports"]["reason"] == "idle"


# --------------------------------------------------------------------------- float32

TORCH_STYLE_FLOAT32 = """
import math
import numpy as np

def sinusoidal_pe(max_len, d_model, base=10000.0):
    pe = np.zeros((max_len, d_model), dtype=np.float32)
    position = np.arange(max_len, dtype=np.float32)[:, None]
    div_term = np.exp(np.arange(0, d_model - d_model % 2, 2, dtype=np.float32)
                      * np.float32(-math.log(base) / d_model))
    pe[:, 0:2 * (d_model // 2):2] = np.sin(position * div_term)
    pe[:, 1:2 * (d_model // 2):2] = np.cos(position * div_term)
    return pe

def add_positional_encoding(x, base=10000.0):
    return x + sinusoidal_pe(x.shape[-2], x.shape[-1], base)
"""

FLOAT64_STORED_AS_FLOAT32 = """
import numpy as np

def sinusoidal_pe(max_len, d_model, base=10000.0):
    angles = np.arange(max_len)[:, None] / base ** (2 * np.arange(d_model // 2) / d_model)
    pe = np.zeros((max_len, d_model), dtype=np.float32)
    pe[:, 0:2 * (d_model // 2):2] = np.sin(angles)
    pe[:, 1:2 * (d_model // 2):2] = np.cos(angles)
    return pe

def add_positional_encoding(x, base=10000.0):
    return x + sinusoidal_pe(x.shape[-2], x.shape[-1], base)
"""


def _lost(report):
    return {n for n, c in _checks(report).items() if c["status"] != "passed" and c["max_score"]}


@pytest.mark.parametrize("source", ["sample", TORCH_STYLE_FLOAT32], ids=["sample", "exp-log form"])
def test_float32_arithmetic_loses_the_precision_point_only(tmp_path, source):
    path = (
        os.path.join(PE_SAMPLES, "mistake_float32_table.py")
        if source == "sample"
        else write(tmp_path / "f32.py", source)
    )
    report = _report(PE_TASK, path)
    assert _lost(report) == {"float64-precision"}, _lost(report)
    assert report["score"] == score_without("float64-precision")
    precision = _checks(report)["float64-precision"]
    assert "atol=1e-06" in precision["message"] and "float64" in precision["message"]


def test_the_rule_is_about_values_a_float64_table_stored_as_float32_is_right(tmp_path):
    """The statement asks for values within 1e-6 at max_len 8192 and a floating dtype."""
    report = _report(PE_TASK, write(tmp_path / "stored.py", FLOAT64_STORED_AS_FLOAT32))
    assert report["score"] == score_without(), _lost(report)


def test_the_statement_states_the_tolerances_the_checks_use(pe_task):
    with open(pe_task.statement_path, encoding="utf-8") as f:
        statement = " ".join(f.read().split())
    by_name = {c.name: c for c in pe_task.checks}
    assert pe_task.tolerance.atol == 0.002 and "within 0.002" in statement
    assert by_name["float64-precision"].options.tolerance.atol == 1e-6
    assert "`max_len = 8192` within 1e-6" in statement
    examples = [c for c in pe_task.checks if c.name.startswith("example-")]
    assert examples and all(c.options.tolerance.atol == 1e-6 for c in examples)
    assert "within 1e-6 of the exact ones in the examples below" in statement


def test_a_zero_table_gets_no_policy_point(tmp_path):
    """np.zeros passes 'an odd width's last column stays 0' (one value repeated): that is
    no work, so numpy-only does not count."""
    path = write(
        tmp_path / "zeros.py",
        """
        import numpy as np

        def sinusoidal_pe(max_len, d_model, base=10000.0):
            return np.zeros((max_len, d_model))

        def add_positional_encoding(x, base=10000.0):
            return np.zeros(x.shape)
        """,
    )
    checks = _checks(_report(PE_TASK, path))
    assert checks["odd-width-last-column-zero"]["status"] == "passed"
    assert (checks["numpy-only"]["status"], checks["numpy-only"]["reason"]) == ("skipped", "idle")


def test_a_typed_in_printed_answer_gets_no_policy_point(tmp_path):
    path = tmp_path / "typed.py"
    path.write_text("print((5, 8))\n")
    checks = _checks(_report(os.path.join(ROOT, "tasks", "pe-table-shape"), path))
    assert checks["prints-the-shape"]["status"] == "passed"
    assert (checks["allowed-imports"]["status"], checks["allowed-imports"]["reason"]) == ("skipped", "idle")


CRASHES_AT_ONE_COLUMN = """
import numpy as np


def sinusoidal_pe(max_len, d_model, base=10000.0):
    if d_model == 1:
        raise ValueError("d_model must be at least 2")
    pe = np.zeros((max_len, d_model))
    p = np.arange(max_len)[:, None]
    i = np.arange(d_model // 2)
    angles = p / base ** (2 * i / d_model)
    pe[:, 0:2 * (d_model // 2):2] = np.sin(angles)
    pe[:, 1:2 * (d_model // 2):2] = np.cos(angles)
    return pe


def add_positional_encoding(x, base=10000.0):
    return x + sinusoidal_pe(x.shape[-2], x.shape[-1], base)
"""


def test_a_crash_at_one_edge_costs_the_checks_about_that_edge_only(tmp_path, pe_task):
    """The task names d_model = 1 an edge (task.yaml edges:): the checks that list a case
    there judge it, the others draw around it. On main this file scored 9/33."""
    report = _report(PE_TASK, write(tmp_path / "edge.py", CRASHES_AT_ONE_COLUMN))
    at_the_edge = [
        c.name
        for c in pe_task.checks
        if c.call is not None
        and any(e.holds(case) for e in pe_task.edges for case in _literal_cases(pe_task, c))
    ]
    assert sorted(at_the_edge) == ["add-at-bounds", "table-at-bounds"]
    lost = [c["name"] for c in report["checks"] if c["score"] < c["max_score"]]
    assert sorted(lost) == sorted(at_the_edge), lost
    assert report["score"] == score_without(*at_the_edge)
    assert "raised ValueError: d_model must be at least 2" in _checks(report)["table-at-bounds"]["message"]


def _literal_cases(task, check):
    from grader.cases import freeze_files as frozen
    from grader.cases.generate import case_set

    cases = case_set(task, None, check, freeze=frozen.load_freeze(task))
    return cases.cases[: cases.literal_count]


ONE_SIGN_WRONG = CRASHES_AT_ONE_COLUMN.replace(
    '    if d_model == 1:\n        raise ValueError("d_model must be at least 2")\n', ""
).replace("pe[:, 0:2 * (d_model // 2):2] = np.sin(angles)", "pe[:, 0:2 * (d_model // 2):2] = -np.sin(angles)")
ZERO_STUB = """
import numpy as np


def sinusoidal_pe(max_len, d_model, base=10000.0):
    return np.zeros((max_len, d_model))


def add_positional_encoding(x, base=10000.0):
    return x + 0.0
"""


def test_a_real_attempt_with_wrong_values_earns_the_policy_points_a_stub_does_not(tmp_path):
    """Policy points pay for real work even when its values are wrong (a sign wrong: the
    cosine columns are right), never for a stub; on main both scored 6/33."""
    attempt = _report(PE_TASK, write(tmp_path / "attempt.py", ONE_SIGN_WRONG))
    stub = _report(PE_TASK, write(tmp_path / "stub.py", ZERO_STUB))
    for name in ("numpy-only", "add-leaves-input-unchanged"):
        assert _checks(attempt)[name]["status"] == "passed", _checks(attempt)[name]
        assert _checks(stub)[name]["reason"] == "idle", _checks(stub)[name]
    assert attempt["score"] > stub["score"]
