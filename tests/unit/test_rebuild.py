"""A failing input is Python a student can paste: each argument is written so that it
rebuilds the very value sent (rebuild.py), or says that no short expression does."""

import numpy as np
import pytest

from grader.grading.checks.calls import format_call
from grader.task.rebuild import array_expression, build, expression, recipe_expression


def _evaluated(text):
    return eval(text, {"np": np})


def _same(a, b):
    return (
        type(a) is type(b)
        and np.asarray(a).dtype == np.asarray(b).dtype
        and np.shape(a) == np.shape(b)
        and np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()
    )


RECIPE = {"uniform": {"seed": 7, "low": -100.0, "high": 100.0, "shape": [32, 23], "dtype": "float64"}}


@pytest.mark.parametrize(
    "value, text",
    [
        (np.full((2, 3), 0.5), "np.full((2, 3), 0.5)"),
        (np.full((2, 2), 0.1, dtype=np.float32), "np.full((2, 2), 0.1, dtype=np.float32)"),
        (np.full((3,), 7, dtype=np.int64), "np.full((3,), 7, dtype=np.int64)"),
        (np.full((2, 1), np.nan), "np.full((2, 1), np.nan)"),
        (np.full((1, 2), -0.0), "np.full((1, 2), -0.0)"),
        (np.zeros((0, 3)), "np.zeros((0, 3), dtype=np.float64)"),
        (
            np.arange(24, dtype=np.float64).reshape(2, 3, 4) * 0.5,
            "np.arange(24, dtype=np.float64).reshape(2, 3, 4) * 0.5",
        ),
        (np.arange(100, dtype=np.int32) + 3, "np.arange(100, dtype=np.int32) + 3"),
        (np.array([[1.5, -2.0], [0.1, 3.0]]), "np.array([[1.5, -2.0], [0.1, 3.0]])"),
        (np.array([1e-300, np.inf]), "np.array([1e-300, np.inf])"),
    ],
)
def test_arrays_are_written_in_the_shortest_form_that_rebuilds_them(value, text):
    assert array_expression(value) == text
    assert _same(_evaluated(text), value)


def test_a_drawn_array_is_written_as_its_recipe_and_the_recipe_rebuilds_it():
    value = build(RECIPE)
    text = array_expression(value, RECIPE)
    assert text == "np.random.default_rng(7).uniform(-100.0, 100.0, (32, 23))"
    assert _same(_evaluated(text), value)
    for recipe in (
        {"uniform": dict(RECIPE["uniform"], dtype="float32", shape=[3, 50])},
        {"integers": {"seed": 3, "low": -5, "high": 5, "shape": [400], "dtype": "int16"}},
    ):
        value = build(recipe)
        assert _same(_evaluated(recipe_expression(recipe)), value)
        assert array_expression(value, recipe) == recipe_expression(recipe)


def test_a_recipe_is_used_only_for_the_array_it_rebuilds():
    """A recipe of another array (another shape, or damaged values: it may come from a
    task's files) is never shown for this one, and never built bigger than it."""
    value = build(RECIPE)
    other = {"uniform": dict(RECIPE["uniform"], seed=8)}
    huge = {"uniform": dict(RECIPE["uniform"], shape=[10**6, 10**6])}
    for recipe in (other, huge, {"uniform": {"seed": "7"}}, {"exec": {}}, "np.zeros(3)", {}):
        assert array_expression(value, recipe).startswith("<float64 array of shape (32, 23): no short")
    with pytest.raises(ValueError):
        build({"uniform": dict(RECIPE["uniform"], dtype="object")})


def test_few_runs_of_equal_values_are_written_out_as_runs():
    value = np.full((32, 23), 0.5)
    value[3, 4] = 2.0
    text = array_expression(value)
    assert text == "np.array([0.5] * 73 + [2.0] + [0.5] * 662).reshape(32, 23)"
    assert _same(_evaluated(text), value)


def test_an_array_no_short_expression_rebuilds_says_so_with_its_first_values():
    value = np.random.default_rng(1).standard_normal((64, 128))
    text = array_expression(value)
    assert text.startswith(
        "<float64 array of shape (64, 128): no short Python expression "
        "rebuilds it exactly; its first values are "
    )
    assert repr(float(value[0, 0])) in text and text.endswith(", ...>")


def test_every_written_form_rebuilds_exactly():
    """Whatever the array, its text either rebuilds it bit for bit or is not Python."""
    rng = np.random.default_rng(0)
    values = [
        rng.standard_normal(5).astype(np.float16),
        rng.integers(0, 3, (4, 4)).astype(np.uint8),
        np.array([True, False, True]),
        np.array([1 + 2j, 3.5 - 1j]),
        np.linspace(0.0, 1.0, 7),
        np.array(2.5),
        rng.standard_normal((3, 3)).astype(np.float32),
    ]
    for value in values:
        text = array_expression(value)
        assert not text.startswith("<"), text
        assert _same(_evaluated(text), value), text


def test_scalars_and_containers_are_python_literals():
    assert expression(float("nan")) == "float('nan')" and expression(-float("inf")) == "-float('inf')"
    assert expression(0.1) == "0.1" and expression(3) == "3" and expression("a") == "'a'"
    assert expression(np.float32(0.1)) == "np.float32(0.1)"
    assert _same(_evaluated(expression(np.float32(0.1))), np.float32(0.1))
    assert expression([1.5, (2, 3.0)]) == "[1.5, (2, 3.0)]" and expression((1,)) == "(1,)"


def test_a_failing_call_is_pasteable_with_its_recipes():
    x = build(RECIPE)
    text = format_call("add_positional_encoding", ("x", "base"), {"base": 2.0, "x": x}, {"x": RECIPE})
    assert text == (
        "add_positional_encoding(x=np.random.default_rng(7).uniform(-100.0, 100.0, (32, 23)), base=2.0)"
    )
    sent = {}
    _evaluated_call = eval(
        text, {"np": np, "add_positional_encoding": lambda x, base: sent.update(x=x, base=base)}
    )
    assert _evaluated_call is None and _same(sent["x"], x) and sent["base"] == 2.0
