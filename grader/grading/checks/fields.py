"""Fields that several kinds take: their JSON Schema, and the rules about them that a schema
cannot express (argument names, values drawn before they are referred to, ranges no value
can be drawn from, index expressions that must parse). Each kind picks the ones it takes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from grader.task.check_kind import Reading
from grader.task.index_expr import parse_select

JSON = dict[str, Any]  # a piece of JSON Schema
CALL: JSON = {"$ref": "#/$defs/identifier", "description": "The student function this check calls."}
ARGS: JSON = {"type": "object", "additionalProperties": {"$ref": "#/$defs/strategy"}}
DRAW: JSON = {
    "type": "object",
    "additionalProperties": {"$ref": "#/$defs/strategy"},
    "description": "Helper values drawn before args (not passed); args refer to them with {ref: name}.",
}
CASE_COUNT: JSON = {"type": "integer", "minimum": 1, "maximum": 10000}
LITERAL_CASES: JSON = {"type": "array", "items": {"type": "object"}, "minItems": 1}
EDGE_CASES: JSON = {
    "type": "array",
    "items": {"type": "object"},
    "description": "Argument sets always tried first (literal values).",
}
COMPARE: JSON = {"enum": ["values", "shape", "type"]}
SELECT: JSON = {
    "type": "string",
    "description": "A numpy index such as '[:, 0:2]' applied to both outputs before comparing.",
}
RETURNS: JSON = {
    "type": "object",
    "additionalProperties": False,
    "properties": {"class": {"enum": ["ndarray"]}, "dtype": {"type": "string"}},
}
TOLERANCE: JSON = {"$ref": "#/$defs/tolerance"}

Problem = Callable[[tuple, str], None]


def check_arguments(r: Reading) -> None:
    """Argument names (in args, literal cases and edge cases) are the called function's
    parameters; every {ref: name} names a value drawn before it; no range is empty."""
    raw = r.raw
    literal: list = raw["cases"] if isinstance(raw.get("cases"), list) else []
    for args in [raw.get("args", {})] + literal + raw.get("edge_cases", []):
        for arg in args:
            if r.call is not None and arg not in r.params:
                r.problem(r.at + ("args",), f"'{arg}' is not a parameter of {r.call}({', '.join(r.params)}).")
    _check_refs(raw.get("draw", {}), [], r.at + ("draw",), r.problem)
    for group in ("draw", "args"):
        for arg, spec in raw.get(group, {}).items():
            _check_intervals(spec, r.at + (group, arg), r.problem)
    _check_refs(raw.get("args", {}), list(raw.get("draw", {})), r.at + ("args",), r.problem)


def check_select(r: Reading) -> None:
    if "select" in r.raw:
        try:
            parse_select(r.raw["select"])
        except ValueError as exc:
            r.problem(r.at + ("select",), f"{exc}. Write a numpy index such as '[:, 0:2]' or '[..., -1]'.")


def _check_intervals(spec: Any, at: tuple, problem: Problem) -> None:
    """Ranges no value can be drawn from (min above max, a parity no integer in range has),
    found when the task loads rather than as a Hypothesis error while grading. Bounds
    that name other values ({ref: ...}) are checked when cases are generated."""
    if not isinstance(spec, dict) or len(spec) != 1:
        return
    ((form, opts),) = spec.items()
    opts = dict(opts) if isinstance(opts, dict) else None
    if opts is None:
        return
    if form in ("integers", "floats"):
        _check_range(opts, at + (form,), problem)
        low: Any = opts.get("min")
        high: Any = opts.get("max")
        parity = opts.get("parity")
        if (
            parity
            and _is_number(low)
            and _is_number(high)
            and low <= high
            and not any((n % 2 == 1) == (parity == "odd") for n in range(int(low), int(high) + 1)[:2])
        ):
            problem(
                at + (form, "parity"),
                f"no {parity} integer lies between {low} and {high}. Widen the range or drop parity.",
            )
    elif form == "array":
        for i, dim in enumerate(opts.get("shape", []) if isinstance(opts.get("shape"), list) else []):
            _check_intervals(dim, at + ("array", "shape", i), problem)
        for part in ("elements", "leading_axes"):
            if isinstance(opts.get(part), dict):
                _check_range(opts[part], at + ("array", part), problem)


def _check_range(opts: dict, at: tuple, problem: Problem) -> None:
    low: Any = opts.get("min")
    high: Any = opts.get("max")
    if _is_number(low) and _is_number(high) and low > high:
        problem(at, f"min {low} is above max {high}: no value can be drawn. Swap them.")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_refs(strategies: dict, known: list[str], at: tuple, problem: Problem) -> None:
    """Every {ref: name} must name a value drawn before it."""
    seen = list(known)
    for name, strategy in strategies.items():
        for ref in _refs_in(strategy):
            if ref not in seen:
                problem(
                    at + (name,),
                    f"{{ref: {ref}}} refers to nothing drawn before '{name}'. "
                    "Draw it first (under draw:, or as an earlier argument).",
                )
        seen.append(name)


def _refs_in(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        if set(value) == {"ref"}:
            yield value["ref"]
        if "with" in value and isinstance(value["with"], list):
            yield from value["with"]
        for v in value.values():
            yield from _refs_in(v)
    elif isinstance(value, list):
        for v in value:
            yield from _refs_in(v)
