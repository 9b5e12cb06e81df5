"""An argument as one line of Python that rebuilds it exactly: the failing input a student
pastes to get the very same call.

An array is written in the first of these forms that rebuilds it bit for bit (dtype, shape
and every value; each candidate is evaluated here, with numpy and nothing else, and kept
only if it does):

    np.zeros((0, 3))                          no elements
    np.full((2, 3), 0.5)                      every element the same
    np.arange(24, dtype=np.float64).reshape(2, 3, 4) * 0.5 + 1.0      evenly spaced
    np.array([[1.5, -2.0], [0.25, 3.0]])      every value written out, when that is short
    np.random.default_rng(7).uniform(-100.0, 100.0, (32, 23))   how the grader drew it: its
                                              recipe (strategies.py), recorded with the case
    np.array([0.5] * 40 + [2.0] + [0.5] * 695).reshape(32, 23)  a few runs of equal values

Otherwise no short expression rebuilds it, and the text says so (dtype, shape, first values)
rather than print something that looks pasteable and is not the same array.

A recipe is plain data, ``{"uniform": {seed, low, high, shape, dtype}}`` or
``{"integers": {...}}`` (integers from low to high inclusive); ``build`` makes its array.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

MAX_CHARS = 240  # longest written-out form shown (a full or drawn form is always short)
FIRST_VALUES = 6  # values shown of an array no short expression rebuilds
RECIPE_FORMS = ("uniform", "integers")


# --------------------------------------------------------------------------- recipes


def build(recipe: dict) -> np.ndarray:
    """The array a recipe describes; ValueError for anything that is not a recipe."""
    form, spec = _recipe_parts(recipe)
    rng = np.random.default_rng(spec["seed"])
    dtype = np.dtype(spec["dtype"])
    if form == "uniform":
        return rng.uniform(spec["low"], spec["high"], tuple(spec["shape"])).astype(dtype, copy=False)
    return rng.integers(spec["low"], spec["high"], tuple(spec["shape"]), dtype=dtype, endpoint=True)


def recipe_expression(recipe: dict) -> str:
    form, spec = _recipe_parts(recipe)
    shape, dtype = _shape_text(tuple(spec["shape"])), np.dtype(spec["dtype"])
    head = f"np.random.default_rng({spec['seed']})"
    if form == "uniform":
        text = f"{head}.uniform({_float(spec['low'])}, {_float(spec['high'])}, {shape})"
        return text if dtype == np.float64 else f"{text}.astype({_dtype(dtype)})"
    return f"{head}.integers({spec['low']}, {spec['high']}, {shape}, dtype={_dtype(dtype)}, endpoint=True)"


def _recipe_parts(recipe: Any) -> tuple[str, dict]:
    """(form, fields) of a well-formed recipe (it may come from a task's frozen files)."""
    if not isinstance(recipe, dict) or len(recipe) != 1:
        raise ValueError(f"not a recipe: {recipe!r:.80}")
    ((form, spec),) = recipe.items()
    number = float if form == "uniform" else int
    if (
        form not in RECIPE_FORMS
        or not isinstance(spec, dict)
        or set(spec) != {"seed", "low", "high", "shape", "dtype"}
        or type(spec["seed"]) is not int
        or spec["seed"] < 0
        or not all(isinstance(spec[k], number) and not isinstance(spec[k], bool) for k in ("low", "high"))
        or not isinstance(spec["shape"], (list, tuple))
        or not all(type(d) is int and d >= 0 for d in spec["shape"])
        or spec["dtype"] not in _RECIPE_DTYPES[form]
    ):
        raise ValueError(f"not a recipe: {recipe!r:.80}")
    return form, spec


_RECIPE_DTYPES = {
    "uniform": ("float16", "float32", "float64"),
    "integers": ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"),
}


# --------------------------------------------------------------------------- expressions


def expression(value: Any, recipe: dict | None = None) -> str:
    """``value`` as Python that rebuilds it exactly, or (an array only) a description that
    says no short expression does."""
    if isinstance(value, np.ndarray):
        return array_expression(value, recipe)
    if isinstance(value, np.generic):
        text = f"np.{value.dtype.name if value.dtype != np.bool_ else 'bool_'}({_element(value)})"
        return text if _rebuilds(text, value) else repr(value.item())
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, (list, tuple)):
        items = ", ".join(expression(v) for v in value)
        return f"[{items}]" if isinstance(value, list) else f"({items}{',' if len(value) == 1 else ''})"
    return repr(value)


def array_expression(value: np.ndarray, recipe: dict | None = None) -> str:
    with np.errstate(all="ignore"):  # (a candidate may overflow: it is then not kept)
        for candidate in _candidates(value, recipe):
            if candidate is not None and _rebuilds(candidate, value):
                return candidate
        return _description(value)


def _candidates(value: np.ndarray, recipe: dict | None) -> Iterator[str | None]:
    """Expressions to try, best first (each one is built only when the one before failed)."""
    if _dtype(value.dtype) is None:
        return
    if value.size == 0:
        yield f"np.zeros({_shape_text(value.shape)}{_dtype_arg(value.dtype, always=True)})"
        return
    flat = value.ravel()
    if np.all(flat == flat[0]) or (value.dtype.kind == "f" and np.all(np.isnan(flat))):
        yield f"np.full({_shape_text(value.shape)}, {_element(flat[0])}{_dtype_arg(value.dtype)})"
    if flat.size > 2:
        yield _evenly_spaced(value)
    yield _short(_written_out(value))
    if recipe is not None:
        yield _recipe_for(value, recipe)
    yield _short(_runs(value))


def _recipe_for(value: np.ndarray, recipe: dict) -> str | None:
    try:
        _, spec = _recipe_parts(recipe)
        if tuple(spec["shape"]) != value.shape or np.dtype(spec["dtype"]) != value.dtype:
            return None  # (checked first: a recipe is never built bigger than its array)
        return recipe_expression(recipe)
    except ValueError:
        return None


def _evenly_spaced(value: np.ndarray) -> str | None:
    if value.dtype.kind not in "iuf":
        return None
    flat = value.ravel()
    start, step = flat[0], flat[1] - flat[0]
    text = f"np.arange({flat.size}, dtype={_dtype(value.dtype)})"
    if value.ndim != 1:
        text += f".reshape{_shape_text(value.shape)}"
    if step != 1:
        text += f" * {_element(step)}"
    if start != 0:
        text += (
            f" + {_element(start)}" if not str(_element(start)).startswith("-") else f" - {_element(-start)}"
        )
    return text


def _written_out(value: np.ndarray) -> str | None:
    if value.ndim == 0 or value.size > 64:  # (0-d: np.full covers it)
        return None
    return f"np.array({_nested(value)}{_dtype_arg(value.dtype)})"


def _nested(value: np.ndarray) -> str:
    if value.ndim == 1:
        return "[" + ", ".join(_element(v) for v in value) + "]"
    return "[" + ", ".join(_nested(row) for row in value) + "]"


def _runs(value: np.ndarray) -> str | None:
    flat = value.ravel()
    if flat.size > 1 << 20:
        return None
    change = np.flatnonzero(flat[1:] != flat[:-1]) + 1
    if len(change) > MAX_CHARS // 6:
        return None
    starts = [0, *change.tolist()]
    ends = [*change.tolist(), flat.size]
    parts = [f"[{_element(flat[s])}]" + (f" * {e - s}" if e - s > 1 else "") for s, e in zip(starts, ends)]
    text = f"np.array({' + '.join(parts)}{_dtype_arg(value.dtype)})"
    return text if value.ndim == 1 else f"{text}.reshape{_shape_text(value.shape)}"


def _short(text: str | None) -> str | None:
    return text if text is not None and len(text) <= MAX_CHARS else None


def _description(value: np.ndarray) -> str:
    first = ", ".join(_element(v) for v in value.ravel()[:FIRST_VALUES])
    more = ", ..." if value.size > FIRST_VALUES else ""
    return (
        f"<{value.dtype} array of shape {_shape_text(value.shape)}: no short Python expression "
        f"rebuilds it exactly; its first values are {first}{more}>"
    )


def _rebuilds(text: str, value: Any) -> bool:
    """Whether ``text`` evaluates, with numpy only, to exactly ``value``. The text is this
    module's own: numbers, shapes and dtype names written out here, never student text."""
    try:
        built = eval(text, {"__builtins__": {}, "np": np})
    except Exception:
        return False
    if isinstance(value, np.generic):
        return type(built) is type(value) and _same_bytes(np.asarray(built), np.asarray(value))
    return (
        isinstance(built, np.ndarray)
        and built.dtype == value.dtype
        and built.shape == value.shape
        and _same_bytes(built, value)
    )


def _same_bytes(a: np.ndarray, b: np.ndarray) -> bool:
    return np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


# --------------------------------------------------------------------------- pieces


def _float(x: float) -> str:
    if math.isnan(x):
        return "float('nan')"
    if math.isinf(x):
        return "float('inf')" if x > 0 else "-float('inf')"
    return repr(x)


def _element(x: object) -> str:
    """One element as a Python literal (numpy's shortest text that reads back as the same
    value of its own type; the dtype argument makes the type)."""
    if isinstance(x, (np.floating, float)):
        f = float(x)
        if math.isnan(f):
            return "np.nan"
        if math.isinf(f):
            return "np.inf" if f > 0 else "-np.inf"
        return repr(f) if isinstance(x, float) or x.dtype == np.float64 else str(x)
    if isinstance(x, (np.complexfloating, complex)):
        return repr(complex(x))
    if isinstance(x, (np.bool_, bool)):
        return repr(bool(x))
    if isinstance(x, (np.integer, int)):
        return str(int(x))
    return repr(x.item() if isinstance(x, np.generic) else x)


def _dtype(dtype: np.dtype) -> str | None:
    """The dtype as numpy spells it in Python (None: not a dtype written out here)."""
    if dtype.kind == "b":
        return "np.bool_"
    if dtype.kind in "iufc" and dtype.isnative:
        return f"np.{dtype.name}"
    return None


def _dtype_arg(dtype: np.dtype, always: bool = False) -> str:
    return "" if dtype == np.float64 and not always else f", dtype={_dtype(dtype)}"


def _shape_text(shape: tuple) -> str:
    return repr(tuple(int(d) for d in shape))
