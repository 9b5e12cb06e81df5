"""Hostile scripts, round three, class 1: a table typed in earns nothing from the checks
that the work was done (builds-the-table, adds-the-first-three-rows), however it is
written: a nested list, np.array of one, scaled integers, a string parsed, hex floats,
raw bytes, base64 decoded by hand, the file's own comment read back, the rows typed and
added to a computed batch, the rows hidden in a typed batch. Each class is graded as a
class (``grader batch``) under every tier and mode; honest files in the same class keep
full marks. The decision is the grader's own (source text and arrays), so a tier changes
nothing: the tests show that, in every tier."""

import base64
import json
import os
import sys
from fractions import Fraction

import numpy as np
import pytest
from helpers.cli import run_cli
from helpers.paths import ROOT

TASKS = os.path.join(ROOT, "tasks")


def _reference_table(length, depth):
    """The expected table, as an attacker reads it from a kit (the test is trusted)."""
    sys.path.insert(0, os.path.join(TASKS, "pe-table-shape"))
    try:
        from reference import table
    finally:
        sys.path.pop(0)
    return table(length, depth)


TABLE = _reference_table(5, 8)
ROWS = _reference_table(4, 6)[:3]


def nested(a, fmt="%.8f"):
    if a.ndim == 1:
        return "[" + ", ".join(fmt % v for v in a) + "]"
    return "[" + ", ".join(nested(row, fmt) for row in a) + "]"


def flat_string(a, fmt="%.9f", sep=" "):
    return sep.join(fmt % v for v in a.ravel())


HAND_BASE64 = """
ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

def decode(text):
    bits = "".join(format(ALPHABET.index(c), "06b") for c in text if c != "=")
    return bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits) - 7, 8))
"""


def table_attacks(a, shape_line):
    """Ways to have the table ``a`` without computing it, each a whole script."""
    b64 = base64.b64encode(a.tobytes()).decode()
    escaped = "".join("\\x%02x" % c for c in a.tobytes())
    return {
        "nested_list": f"import numpy as np\ntable = {nested(a)}\n{shape_line('np.array(table)')}",
        "np_array": f"import numpy as np\ntable = np.array({nested(a)})\n{shape_line('table')}",
        "np_asarray_float32": f"import numpy as np\ntable = np.asarray({nested(a, '%.7f')}, dtype=np.float32)\n"
        f"{shape_line('table')}",
        "scaled_ints": f"import numpy as np\ntable = np.array({nested(np.round(a * 1e8), '%d')}) / 1e8\n"
        f"{shape_line('table')}",
        "scaled_by_seven": f"import numpy as np\ntable = np.array({nested(a * 7, '%.10f')}) / 7\n"
        f"{shape_line('table')}",
        "shifted_by_one": f"import numpy as np\ntable = np.array({nested(a + 1, '%.10f')}) - 1\n"
        f"{shape_line('table')}",
        "fromstring": f"import numpy as np\ntable = np.fromstring('{flat_string(a)}', sep=' ')"
        f".reshape{a.shape}\n{shape_line('table')}",
        "float_of_strings": "import numpy as np\ntable = np.array([float(s) for s in "
        f"'{flat_string(a, sep=',')}'.split(',')]).reshape{a.shape}\n"
        f"{shape_line('table')}",
        "hex_floats": "import numpy as np\ntable = np.array([float.fromhex(h) for h in "
        f"{[float(v).hex() for v in a.ravel()]!r}]).reshape{a.shape}\n{shape_line('table')}",
        "frombuffer": f"import numpy as np\ntable = np.frombuffer(b'{escaped}').reshape{a.shape}\n"
        f"{shape_line('table')}",
        "base64_by_hand": f"import numpy as np\n{HAND_BASE64}\n"
        f"table = np.frombuffer(decode('{b64}')).reshape{a.shape}\n{shape_line('table')}",
        "base64_per_value_float32": f"import numpy as np\n{HAND_BASE64}\n"
        "table = np.array([np.frombuffer(decode(s), dtype=np.float32)[0] for s in "
        f"{[base64.b64encode(np.float32(v).tobytes()).decode() for v in a.ravel()]!r}])"
        f".reshape{a.shape}\n{shape_line('table')}",
        "own_comment": "import numpy as np\n"
        f"# {flat_string(a)}\n"
        "text = open(__file__).read().splitlines()[1][2:]\n"
        f"table = np.array([float(s) for s in text.split()]).reshape{a.shape}\n"
        f"{shape_line('table')}",
        "typed_zeros": f"import numpy as np\ntable = np.zeros({a.shape}) + np.array({nested(a)})\n"
        f"{shape_line('table')}",
        # (round two of the red team: arithmetic of the rule's blind spot, and Python's digits)
        "split_in_a_sum": f"import numpy as np\ntable = np.array({nested(np.round(a, 1), '%.1f')}) + "
        f"np.array({nested(a - np.round(a, 1), '%.9f')})\n{shape_line('table')}",
        "affine_map": f"import numpy as np\ntable = (np.array({nested(3 * a + 0.25, '%.9f')}) - 0.25) / 3\n"
        f"{shape_line('table')}",
        "fractions": "import numpy as np\ntable = np.array("
        f"{[[list(Fraction(float(v)).limit_denominator(50000).as_integer_ratio()) for v in row] for row in np.atleast_2d(a)]!r}"
        f").astype(float)\ntable = (table[..., 0] / table[..., 1]).reshape{a.shape}\n{shape_line('table')}",
        "arabic_indic_digits": "import numpy as np\ntable = np.array([float(s) for s in "
        f"{[_indic(f'{v:.9f}') for v in a.ravel()]!r}]).reshape{a.shape}\n"
        f"{shape_line('table')}",
        "u_escapes_of_the_bits": 'import numpy as np\npacked = "'
        + "".join("\\u%04x" % u for u in np.frombuffer(a.astype(np.float64).tobytes(), dtype=np.uint16))
        + '"\n'
        f"table = np.array([ord(c) for c in packed], dtype=np.uint16).view(np.float64).reshape{a.shape}\n"
        f"{shape_line('table')}",
        "n_escapes_of_digits": "import numpy as np\ntable = np.array([float(s) for s in ["
        + ", ".join('"' + "".join(_named(c) for c in f"{v:.9f}") + '"' for v in a.ravel())
        + "]])"
        f".reshape{a.shape}\n{shape_line('table')}",
    }


_DIGIT_NAMES = {
    str(d): name
    for d, name in enumerate(["ZERO", "ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT", "NINE"])
}


def _indic(text: str) -> str:
    """The same number in Arabic-Indic digits (float() reads them)."""
    return "".join(chr(0x0660 + int(c)) if c.isdigit() else c for c in text)


def _named(char: str) -> str:
    return f"\\N{{DIGIT {_DIGIT_NAMES[char]}}}" if char.isdigit() else char


TABLE_SHAPE = table_attacks(TABLE, lambda name: f"print({name}.shape)\n")

COMPUTED_TABLE = """import numpy as np

def table(length, depth):
    p = np.arange(length)[:, None]
    j = np.arange(depth)[None, :]
    angles = p / np.power(10000.0, (2 * (j // 2)) / depth)
    return np.where(j % 2 == 0, np.sin(angles), np.cos(angles))
"""

BATCH_SUM = {
    **{
        f"table_and_rows_{name}": source
        for name, source in table_attacks(
            ROWS, lambda name: f"batch = np.ones((1, 3, 6))\ntotal = batch + {name}\nprint(total.shape)\n"
        ).items()
    },
    "whole_table_typed": "import numpy as np\n"
    f"table = np.array({nested(_reference_table(4, 6))})\n"
    "print((np.ones((1, 3, 6)) + table[:3]).shape)\n",
    "typed_rows_on_a_computed_batch": "import numpy as np\n"
    "batch = np.random.default_rng(0).normal(size=(1, 3, 6))\n"
    f"total = batch + np.array({nested(ROWS)})\nprint(total.shape)\n",
    "typed_rows_on_typed_zeros": "import numpy as np\n"
    f"batch = np.array([{nested(np.zeros((3, 6)), '%.1f')}])\n"
    f"total = batch + np.array({nested(ROWS)})\nprint(total.shape)\n",
    "rows_hidden_in_the_batch": COMPUTED_TABLE + "\n"
    f"batch = np.array([{nested(1 - ROWS, '%.9f')}])\n"
    "total = np.ones((1, 3, 6))\nprint(total.shape)\n",
    "sum_typed_in": COMPUTED_TABLE + "\nbatch = np.ones((1, 3, 6))\n"
    f"total = np.array([{nested(1 + ROWS, '%.9f')}])\nprint(total.shape)\n",
}

HONEST = {
    "pe-table-shape": {
        "honest_typed_rates": "import numpy as np\n"
        "rates = np.array([1, 1, 0.1, 0.1, 0.01, 0.01, 0.001, 0.001])\n"
        "angles = np.arange(5)[:, None] * rates\n"
        "table = np.where(np.arange(8) % 2 == 0, np.sin(angles), np.cos(angles))\n"
        "print(table.shape)\n",
    },
    "pe-batch-sum": {
        "honest_tutorial_batch": COMPUTED_TABLE + "\nbatch = np.array([[[1., 0., 1., 0., 1., 0.],\n"
        "                   [0., 1., 0., 1., 0., 1.],\n"
        "                   [1., 0., 1., 0., 1., 0.]]])\n"
        "marked = batch + table(4, 6)[:3][np.newaxis, :, :]\nprint(marked.shape)\n",
        "honest_short_numbers_batch": COMPUTED_TABLE
        + "\nbatch = np.array([[[0.5, 2.25, 1.5, 0.125, 3., 0.75]] * 3])\n"
        "print((batch + table(4, 6)[:3]).shape)\n",
    },
}

WORK = {
    "pe-table-shape": ("builds-the-table",),
    "pe-batch-sum": ("builds-the-table", "adds-the-first-three-rows"),
}
ATTACKS = {"pe-table-shape": TABLE_SHAPE, "pe-batch-sum": BATCH_SUM}


def _batch(tmp_path, tier, task, sources):
    klass = tmp_path / f"class-{task}"
    klass.mkdir()
    for name, source in sources.items():
        (klass / f"{name}.py").write_text(source)
    out = tmp_path / f"out-{task}"
    args = [
        "batch",
        os.path.join(TASKS, task),
        str(klass),
        "--out",
        str(out),
        "--jobs",
        "2",
        "--force",
        "--isolation",
        str(tier),
    ]
    if not getattr(tier, "warm", False):
        args.append("--no-warm")
    if tier == "rlimits":  # refused for a class unless asked for (test_unsafe_tiers.py)
        args.append("--trusted-submissions")
    done = run_cli(*args, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    return {
        json.loads(line)["student"]: json.loads(line)
        for line in (out / f"reports-{task}.jsonl").read_text().splitlines()
    }


def _checks(report):
    return {c["name"]: c for c in report["checks"]}


@pytest.mark.parametrize("task", sorted(ATTACKS))
def test_a_typed_in_table_earns_nothing_from_the_work_checks(tmp_path, tier, task):
    reports = _batch(tmp_path, tier, task, {**ATTACKS[task], **HONEST[task]})
    assert set(reports) == set(ATTACKS[task]) | set(HONEST[task])
    for name in ATTACKS[task]:
        checks = _checks(reports[name])
        assert checks["runs"]["status"] == "passed", (name, checks["runs"]["message"])
        for work in WORK[task]:
            assert checks[work]["status"] != "passed" and checks[work]["score"] == 0, (name, checks[work])
        assert any(checks[work]["reason"] == "typed-in" for work in WORK[task]), name
    for name in HONEST[task]:
        assert reports[name]["score"] == reports[name]["max_score"], (name, reports[name]["checks"])


def test_the_message_names_the_line_and_shows_no_expected_value(tmp_path):
    from grader.authoring import load_task
    from grader.grading.run import grade

    path = tmp_path / "typed.py"
    path.write_text(TABLE_SHAPE["np_array"].replace("table = ", "\n\ntable = ", 1))
    checks = {c.name: c for c in grade(load_task(os.path.join(TASKS, "pe-table-shape")), str(path)).checks}
    work = checks["builds-the-table"]
    assert work.status == "failed" and work.reason == "typed-in" and work.line == 4
    assert "at line 4" in work.message
    assert "compute the table; typing its values in does not count" in work.message.lower()
    for value in TABLE.ravel():
        if abs(value) not in (0.0, 1.0):
            assert f"{abs(value):.4f}"[:6] not in work.message, value
    assert checks["allowed-imports"].status == "skipped"  # (no work done: the point is idle)


def test_a_table_typed_in_a_notebook_is_named_by_its_cell(tmp_path):
    from grader.authoring import load_task
    from grader.grading.run import grade

    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# The table\n"]},
        {
            "cell_type": "code",
            "metadata": {},
            "execution_count": 1,
            "outputs": [],
            "source": ["import numpy as np\n"],
        },
        {
            "cell_type": "code",
            "metadata": {},
            "execution_count": 2,
            "outputs": [],
            "source": ["# pasted\n", f"table = np.array({nested(TABLE)})\n", "print(table.shape)\n"],
        },
    ]
    path = tmp_path / "typed.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    checks = {c.name: c for c in grade(load_task(os.path.join(TASKS, "pe-table-shape")), str(path)).checks}
    work = checks["builds-the-table"]
    assert work.reason == "typed-in" and (work.cell, work.line) == (3, 2), work
    assert "at cell 3, line 2" in work.message
