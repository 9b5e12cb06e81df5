"""Task argument specs -> Hypothesis strategies (trusted side), and literal argument sets.

Values are drawn in the order the YAML lists them (``draw:`` first, then ``args:``), so a
later value can depend on earlier ones: ``{ref: name}`` reuses a value, ``max_product``
caps an integer so a table stays within an element budget, array shapes name earlier sizes.
Hypothesis is imported only when cases must actually be generated.

A drawn array of numbers is either one value throughout (``np.full``) or drawn from a seeded
generator, and then its recipe (rebuild.py) is kept with the case: the failing input shown
to a student rebuilds it exactly, however large it is. Shrinking prefers the constant form.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from grader.task import rebuild

if TYPE_CHECKING:  # (for annotations only: Hypothesis is imported when cases are drawn)
    from hypothesis.strategies import DrawFn, SearchStrategy

SEEDS = 2**32  # a drawn array's generator is seeded from 0 to SEEDS - 1


@dataclass(frozen=True)
class Drawn:
    """One argument set Hypothesis drew, and how to rebuild each array drawn from a seed."""

    args: dict
    recipes: dict = field(default_factory=dict)  # argument name -> recipe (rebuild.py)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """How Hypothesis describes a falsifying example, which it does whenever a shrink
        ends, even when it prints nothing: every array element by element was half the
        time of a shrink that ends soon. No one reads it (the report shows the input as
        rebuild.py writes it): names and shapes only."""
        printer.text(f"Drawn({', '.join(f'{k}={_described(v)}' for k, v in self.args.items())})")


def _described(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"<array {value.dtype} {value.shape}>"
    return _short(repr(value))


class NotLiteral(ValueError):
    """An edge case or example used a drawn strategy where a literal value is needed."""


def materialize(spec: Any, env: dict[str, Any] | None = None) -> Any:
    """A literal argument value: a scalar, a list, or {array: {value|fill, ...}}."""
    env = env or {}
    if not isinstance(spec, dict):
        return spec
    if set(spec) == {"ref"}:
        return env[spec["ref"]]
    if set(spec) == {"array"}:
        a = spec["array"]
        dtype = np.dtype(a.get("dtype", "float64"))
        if "value" in a:
            arr = np.array(a["value"], dtype=dtype)
            if "shape" in a and list(arr.shape) != list(a["shape"]):
                raise NotLiteral(f"array value has shape {arr.shape}, not {tuple(a['shape'])}")
            return arr
        if "fill" in a and all(isinstance(d, int) for d in a["shape"]):
            return np.full(tuple(a["shape"]), a["fill"], dtype=dtype)
    raise NotLiteral(f"{_short(spec)} is a strategy; a literal value is needed here")


def _short(spec: object) -> str:
    text = str(spec)
    return text if len(text) < 60 else text[:57] + "..."


def literal_case(case: dict) -> dict:
    return {name: materialize(spec) for name, spec in case.items()}


def case_strategy(draw_specs: dict[str, Any], arg_specs: dict[str, Any]) -> SearchStrategy[Drawn]:
    """One Hypothesis strategy that draws a whole argument set for a check."""
    from hypothesis import strategies as st

    @st.composite
    def argument_sets(draw: DrawFn) -> Drawn:
        env: dict = {}
        recipes: dict = {}  # value name -> recipe, for the arrays drawn from a seed
        for name, spec in draw_specs.items():
            env[name] = _draw(draw, spec, env, recipes, name)
        args = {}
        for name, spec in arg_specs.items():
            args[name] = env[name] = _draw(draw, spec, env, recipes, name)
        return Drawn(args, {name: recipes[name] for name in args if name in recipes})

    return argument_sets()


def _draw(draw: DrawFn, spec: Any, env: dict[str, Any], recipes: dict[str, Any], name: str) -> Any:
    from hypothesis import strategies as st

    if not isinstance(spec, dict):
        return spec
    ((form, opts),) = spec.items()
    if form == "ref":
        if opts in recipes:
            recipes[name] = recipes[opts]
        return env[opts]
    if form == "integers":
        return draw(_integers(opts, env))
    if form == "floats":
        return draw(st.floats(opts["min"], opts["max"], allow_nan=False, allow_infinity=False))
    if form == "sampled_from":
        return draw(st.sampled_from(opts))
    if form == "array":
        if "value" in opts or "fill" in opts:
            shape = [_draw(draw, d, env, {}, "") for d in opts.get("shape", [])]
            return materialize({"array": dict(opts, shape=shape)})
        array, recipe = _draw_array(draw, opts, env)
        if recipe is not None:
            recipes[name] = recipe
        return array
    raise ValueError(f"unknown strategy {form!r}")


def _integers(opts: dict[str, Any], env: dict[str, Any]) -> SearchStrategy[int]:
    from hypothesis import strategies as st

    low = _bound(opts.get("min"), env)
    high = _bound(opts.get("max"), env)
    if "max_product" in opts:
        cap = opts["max_product"]
        used = math.prod(int(env[name]) for name in cap["with"])
        high = min(high, cap["limit"] // max(used, 1)) if high is not None else cap["limit"] // max(used, 1)
        if low is not None:
            high = max(high, low)
    parity = opts.get("parity")
    if parity:
        offset = 1 if parity == "odd" else 0
        k_low = None if low is None else -((offset - low) // 2)
        k_high = None if high is None else (high - offset) // 2
        return st.integers(k_low, k_high).map(lambda k: 2 * k + offset)
    return st.integers(low, high)


def _bound(value: Any, env: dict[str, Any]) -> int | None:
    if isinstance(value, dict):
        return int(env[value["ref"]])
    return value


def _draw_array(draw: DrawFn, opts: dict[str, Any], env: dict[str, Any]) -> tuple[np.ndarray, dict | None]:
    """An array and its recipe (None: constant, or not numbers drawn from a seed)."""
    from hypothesis import strategies as st

    dtype = np.dtype(opts.get("dtype", "float64"))
    shape = [int(_draw(draw, d, env, {}, "")) for d in opts["shape"]]
    lead = opts.get("leading_axes")
    if lead:
        count = draw(st.integers(lead.get("min", 0), lead.get("max", 3)))
        side = st.integers(1, lead.get("max_side", 4))
        shape = [draw(side) for _ in range(count)] + shape
    bounds = opts.get("elements", {})
    if dtype.kind == "f":
        low, high = bounds.get("min", -1e3), bounds.get("max", 1e3)
        elements = st.floats(low, high, allow_nan=False, allow_infinity=False, width=dtype.itemsize * 8)
        form, limits = "uniform", (float(low), float(high))
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        low, high = max(bounds.get("min", -1000), info.min), min(bounds.get("max", 1000), info.max)
        elements = st.integers(low, high)
        form, limits = "integers", (int(low), int(high))
    else:
        from hypothesis.extra import numpy as hnp  # (only for other dtypes: its import is not free)

        return draw(hnp.arrays(dtype, tuple(shape))), None
    if draw(st.integers(0, 3)) == 0:  # a quarter constant (the form shrinking goes to)
        return np.full(tuple(shape), draw(elements), dtype=dtype), None
    recipe = {
        form: {
            "seed": draw(st.integers(0, SEEDS - 1)),
            "low": limits[0],
            "high": limits[1],
            "shape": shape,
            "dtype": dtype.name,
        }
    }
    return rebuild.build(recipe), recipe
