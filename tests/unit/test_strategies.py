"""Argument specs become values: literal ones directly (strategies.materialize), drawn ones
through Hypothesis (hypothesis_driver), derandomized so every student gets the same cases."""

import numpy as np
import pytest
from helpers.tasks import make_task

from grader.authoring import load_task
from grader.task.hypothesis_driver import collect, explore
from grader.task.strategies import NotLiteral, literal_case, materialize

TASK = """
id: tables
title: Tables
version: 1
functions:
  table: [cols, rows, base]
  scale: [k, x]
checks:
  - name: tables
    kind: property
    call: table
    args:
      cols: {integers: {min: 1, max: 63, parity: odd}}
      rows: {integers: {min: 1, max: 1000, max_product: {with: [cols], limit: 100}}}
      base: {sampled_from: [2.0, 10.0]}
    cases: 60
  - name: arrays
    kind: property
    call: scale
    args:
      k: {integers: {min: 1, max: 4}}
      x: {array: {shape: [{ref: k}, 3], elements: {min: -1, max: 1}}}
    cases: 40
"""

REFERENCE = """
import numpy as np

def table(cols, rows, base):
    return np.zeros((rows, cols)) + base

def scale(k, x):
    return x * k
"""


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    return load_task(make_task(tmp_path_factory.mktemp("t") / "task", TASK, REFERENCE))


def _check(task, name):
    return next(c for c in task.checks if c.name == name)


def test_literal_values_scalars_refs_and_arrays():
    assert materialize(3) == 3 and materialize([1, 2]) == [1, 2]
    assert materialize({"ref": "n"}, {"n": 7}) == 7
    arr = materialize({"array": {"value": [[1, 2]], "dtype": "int32"}})
    assert arr.dtype == np.int32 and arr.tolist() == [[1, 2]]
    np.testing.assert_array_equal(
        materialize({"array": {"shape": [2, 3], "fill": 0.5}}), np.full((2, 3), 0.5)
    )
    case = literal_case({"x": {"array": {"value": [1.0]}}, "n": 2})
    assert case["n"] == 2 and case["x"].tolist() == [1.0]


def test_a_strategy_where_a_literal_is_needed_is_named():
    with pytest.raises(NotLiteral, match="is a strategy"):
        materialize({"integers": {"min": 1, "max": 3}})
    with pytest.raises(NotLiteral, match=r"shape \(2,\), not \(3,\)"):
        materialize({"array": {"value": [1, 2], "shape": [3]}})


def test_drawn_integers_keep_bounds_parity_and_the_product_cap(task):
    cases = [drawn.args for drawn in collect(_check(task, "tables"))]
    assert len(cases) == 60
    assert all(c["cols"] % 2 == 1 and 1 <= c["cols"] <= 63 for c in cases)
    assert all(1 <= c["rows"] and c["rows"] * c["cols"] <= 100 for c in cases)  # max_product
    assert {c["base"] for c in cases} <= {2.0, 10.0}
    assert len({(c["cols"], c["rows"]) for c in cases}) > 10  # drawn, not one value


def test_an_array_shape_can_name_an_earlier_value(task):
    cases = [drawn.args for drawn in collect(_check(task, "arrays"))]
    assert cases and all(c["x"].shape == (c["k"], 3) for c in cases)
    assert all(c["x"].dtype == np.float64 and np.all(np.abs(c["x"]) <= 1) for c in cases)


def test_every_student_gets_the_same_cases(task):
    first, again = collect(_check(task, "tables")), collect(_check(task, "tables"))
    assert first == again  # derandomized: the same sequence every run


def test_a_failure_is_shrunk_to_a_minimal_case(task):
    seen = []

    def body(drawn):
        seen.append(drawn.args)
        if drawn.args["cols"] >= 9:
            raise AssertionError("too wide")

    with pytest.raises(AssertionError, match="too wide"):
        explore(_check(task, "tables"), body, shrink=True)
    assert seen[-1]["cols"] == 9  # the last call is Hypothesis's minimal failing example


def test_a_drawn_array_is_constant_or_rebuilt_exactly_by_its_recipe(task):
    """What makes a large failing input pasteable: every drawn array either holds one value
    (np.full) or comes with the recipe that rebuilds it bit for bit."""
    from grader.task.rebuild import build

    drawn = collect(_check(task, "arrays"))
    with_recipe = [d for d in drawn if "x" in d.recipes]
    assert with_recipe and len(with_recipe) < len(drawn)  # both forms are drawn
    for d in drawn:
        x = d.args["x"]
        if "x" in d.recipes:
            rebuilt = build(d.recipes["x"])
            assert rebuilt.dtype == x.dtype and rebuilt.tobytes() == x.tobytes()
        else:
            assert np.all(x == x.flat[0])


def test_hypothesis_describes_a_drawn_input_by_names_and_shapes():
    """Hypothesis describes every falsifying example when a shrink ends, printed or not:
    element by element, a large array took half the time of a short shrink."""
    from hypothesis.vendor.pretty import pretty

    from grader.task.strategies import Drawn

    text = pretty(Drawn({"x": np.zeros((64, 512)), "base": 2.0}))
    assert text == "Drawn(x=<array float64 (64, 512)>, base=2.0)"
