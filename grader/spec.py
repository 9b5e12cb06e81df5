"""task.yaml -> a validated ``Task``; every error names the file, line and field, and the fix.

Validation has two layers: the published JSON Schema (``grader/schema/task.schema.json``,
also what editors use) for the shape of the file, then the rules a schema cannot express
(names that refer to each other, files that must exist, index expressions that must parse).
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field

import yaml

from .index_expr import parse_select
from .sandbox import Limits
from .tolerance import Tolerance

SCHEMA_PATH = os.path.join(os.path.dirname(__file__), "schema", "task.schema.json")
DEFAULT_CASES = 50
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class SpecError(Exception):
    """A task spec is wrong; ``problems`` are ready-to-print lines (file:line: field: what)."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class CheckSpec:
    name: str
    kind: str
    points: float = 1.0
    description: str = ""
    needs: tuple[str, ...] = ()
    hidden: bool = False
    call: str | None = None
    args: dict = field(default_factory=dict)
    draw: dict = field(default_factory=dict)
    cases: int = DEFAULT_CASES
    fixed_cases: tuple[dict, ...] = ()   # example checks: literal argument sets
    edge_cases: tuple[dict, ...] = ()    # property checks: literal sets tried first
    compare: str = "values"
    select: str | None = None
    returns: dict = field(default_factory=dict)
    expect: object = None
    has_expect: bool = False
    tolerance: Tolerance = Tolerance()
    answer: str | None = None       # prints: reference function giving the printed answer
    format: str | None = None       # prints: shape | integer
    reference: str | None = None    # leaves-*: reference function building the array
    shape: tuple[int, ...] = ()     # leaves-sum: shape of the sum
    line: int = 0

    @property
    def reference_functions(self) -> tuple[str, ...]:
        return tuple(f for f in (self.call, self.answer, self.reference) if f)


FUNCTION_KINDS = ("example", "property", "mutation")
SCRIPT_KINDS = ("prints", "leaves-array", "leaves-sum")


@dataclass(frozen=True)
class Task:
    id: str
    title: str
    version: str
    kind: str                # functions | script
    folder: str
    spec_path: str
    statement_path: str
    reference_path: str
    functions: dict[str, tuple[str, ...]]
    allowed_imports: tuple[str, ...]
    stdlib_imports: tuple[str, ...]
    limits: Limits
    tolerance: Tolerance
    checks: tuple[CheckSpec, ...]
    digest: str

    @property
    def max_score(self) -> float:
        return sum(c.points for c in self.checks)


# --------------------------------------------------------------------------- YAML with lines

def _read_yaml(path: str) -> tuple[object, dict[tuple, int], list[str]]:
    """Parse YAML keeping the line of every node; returns (data, lines, problems)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else path
        problem = getattr(exc, "problem", None) or str(exc)
        return None, {}, [f"{where}: not valid YAML: {problem}. Check the indentation and quoting there."]
    lines: dict[tuple, int] = {}
    problems: list[str] = []
    _walk(node, (), lines, problems, path)
    return data, lines, problems


def _walk(node, at: tuple, lines: dict, problems: list, path: str) -> None:
    if node is None:
        return
    lines[at] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        seen = set()
        for key, value in node.value:
            name = key.value
            if name in seen:
                problems.append(f"{path}:{key.start_mark.line + 1}: {_dotted(at + (name,))}: "
                                f"duplicate key. Keep one '{name}:' entry.")
            seen.add(name)
            _walk(value, at + (name,), lines, problems, path)
            lines[at + (name,)] = key.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, at + (i,), lines, problems, path)


def _dotted(at) -> str:
    text = ""
    for part in at:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def _line(lines: dict, at: tuple) -> int:
    at = tuple(at)
    while at and at not in lines:
        at = at[:-1]
    return lines.get(at, 1)


# --------------------------------------------------------------------------- schema

_validator = None


def _schema_problems(data, lines: dict, path: str) -> list[str]:
    global _validator
    if _validator is None:
        import jsonschema  # only when a spec is read: its import is not free
        with open(SCHEMA_PATH, encoding="utf-8") as f:
            schema = json.load(f)
        _validator = jsonschema.Draft202012Validator(schema)
    from jsonschema.exceptions import best_match, relevance
    problems = []
    for error in sorted(_validator.iter_errors(data), key=relevance):
        if error.context:
            error = best_match(error.context) or error
        at = tuple(error.absolute_path)
        unknown = _unknown_keys(error)
        if unknown:
            at += (unknown[0],)
            text = (f"unknown field{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}."
                    f"{_allowed_keys(error)}")
        else:
            text = f"{error.message}.{_hint(error)}"
        problems.append(f"{path}:{_line(lines, at)}: {_dotted(at)}: {text}")
    return problems[:10]


def _unknown_keys(error) -> list[str]:
    """Keys rejected by additionalProperties: false or a propertyNames list."""
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = set(error.schema.get("properties", {}))
        return [k for k in error.instance if k not in known]
    if "propertyNames" in error.relative_schema_path or "propertyNames" in error.schema_path:
        return [str(error.instance)]
    return []


def _allowed_keys(error) -> str:
    if error.validator == "additionalProperties":
        names = list(error.schema.get("properties", {}))
    elif error.validator == "enum":
        names = list(error.validator_value)
    else:
        return ""
    return f" Allowed here: {', '.join(names)}." if names else ""


def _hint(error) -> str:
    description = error.schema.get("description") if isinstance(error.schema, dict) else None
    if error.validator == "enum":
        return f" Use one of: {', '.join(map(str, error.validator_value))}."
    if error.validator == "required":
        return " Add it."
    if description:
        return f" ({description})"
    return ""


def _validity_marker(path: str) -> str:
    """A cache entry named by the hash of the spec and the schema: same bytes, same verdict."""
    from .cases import cache_dir
    h = hashlib.sha256()
    for p in (path, SCHEMA_PATH):
        with open(p, "rb") as f:
            h.update(f.read())
    return os.path.join(os.path.dirname(cache_dir()), "valid-specs", h.hexdigest()[:32])


def _known_valid(path: str) -> bool:
    return os.path.exists(_validity_marker(path))


def _remember_valid(path: str) -> None:
    marker = _validity_marker(path)
    try:
        os.makedirs(os.path.dirname(marker), mode=0o700, exist_ok=True)
        open(marker, "w").close()
    except OSError:
        pass  # only costs the schema check next time


# --------------------------------------------------------------------------- the task

def load_task(folder: str) -> Task:
    folder = os.path.abspath(folder)
    path = os.path.join(folder, "task.yaml")
    if not os.path.isdir(folder):
        raise SpecError([f"{folder}: no such task folder. Give the folder that holds task.yaml."])
    if not os.path.isfile(path):
        raise SpecError([f"{path}: missing. A task folder needs a task.yaml (see README: writing a task)."])
    data, lines, problems = _read_yaml(path)
    if data is None and not problems:
        problems = [f"{path}:1: the file is empty. Start with id:, title:, version:, functions:, checks:."]
    if problems:
        raise SpecError(problems)
    if not _known_valid(path):
        problems = _schema_problems(data, lines, path)
        if problems:
            raise SpecError(problems)
        _remember_valid(path)
    task = _build(data, folder, path, lines)
    return task


def _check_intervals(spec, at: tuple, problem) -> None:
    """Ranges no value can be drawn from (min above max, a parity no integer in range has),
    found when the task loads rather than as a Hypothesis error while grading. Bounds
    that name other values ({ref: ...}) are checked when cases are generated."""
    if not isinstance(spec, dict) or len(spec) != 1:
        return
    (form, opts), = spec.items()
    if not isinstance(opts, dict):
        return
    if form in ("integers", "floats"):
        _check_range(opts, at + (form,), problem)
        low, high, parity = opts.get("min"), opts.get("max"), opts.get("parity")
        if parity and _is_number(low) and _is_number(high) and low <= high and not any(
                (n % 2 == 1) == (parity == "odd") for n in range(int(low), int(high) + 1)[:2]):
            problem(at + (form, "parity"), f"no {parity} integer lies between {low} and {high}. "
                                           "Widen the range or drop parity.")
    elif form == "array":
        for i, dim in enumerate(opts.get("shape", []) if isinstance(opts.get("shape"), list) else []):
            _check_intervals(dim, at + ("array", "shape", i), problem)
        for part in ("elements", "leading_axes"):
            if isinstance(opts.get(part), dict):
                _check_range(opts[part], at + ("array", part), problem)


def _check_range(opts: dict, at: tuple, problem) -> None:
    low, high = opts.get("min"), opts.get("max")
    if _is_number(low) and _is_number(high) and low > high:
        problem(at, f"min {low} is above max {high}: no value can be drawn. Swap them.")


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_kit(folder: str) -> bool:
    """A student kit (kit.py) has frozen cases and no reference."""
    try:
        with open(os.path.join(folder, "frozen", "manifest.json")) as f:
            return json.load(f).get("kit") is True
    except (OSError, ValueError, AttributeError):
        return False


def _build(data: dict, folder: str, path: str, lines: dict) -> Task:
    problems: list[str] = []

    def problem(at: tuple, text: str) -> None:
        problems.append(f"{path}:{_line(lines, at)}: {_dotted(at)}: {text}")

    kind = data.get("kind", "functions")
    functions = {name: tuple(params) for name, params in data.get("functions", {}).items()}
    files = {}
    for key, default in (("statement", "statement.md"), ("reference", "reference.py")):
        files[key] = os.path.join(folder, data.get(key, default))
        if not os.path.isfile(files[key]) and not (key == "reference" and _is_kit(folder)):
            problem((key,), f"file {files[key]} does not exist. Create it or fix the name.")
    default_tolerance = Tolerance(**data.get("tolerance", {}))
    default_cases = data.get("cases", DEFAULT_CASES)
    checks: list[CheckSpec] = []
    names: set[str] = set()
    hidden_names: set[str] = set()
    for i, raw in enumerate(data["checks"]):
        at = ("checks", i)
        name = raw["name"]
        if name in names:
            problem(at + ("name",), f"check name '{name}' is used twice. Check names must be unique.")
        for need in raw.get("needs", []):
            if need not in names:
                problem(at + ("needs",), f"'{need}' is not a check defined above this one. "
                                         "A check can only need checks listed before it.")
            elif need in hidden_names and not raw.get("hidden", False):
                problem(at + ("needs",), f"'{need}' is hidden, and hidden checks run after every "
                                         "visible one. Make this check hidden too, or drop the need.")
        names.add(name)
        if raw.get("hidden", False):
            hidden_names.add(name)
        wrong_family = FUNCTION_KINDS if kind == "script" else SCRIPT_KINDS
        if raw["kind"] in wrong_family:
            article = "an" if raw["kind"][0] in "aeiou" else "a"
            problem(at + ("kind",), f"{article} {raw['kind']} check does not fit a {kind} task. Use "
                                    f"{', '.join(('imports',) + (SCRIPT_KINDS if kind == 'script' else FUNCTION_KINDS))}.")
        call = raw.get("call")
        if call is not None and call not in functions:
            problem(at + ("call",), f"'{call}' is not among functions: ({', '.join(functions)}). "
                                    "Declare it under functions: or fix the name.")
        params = functions.get(call, ())
        drawn = list(raw.get("draw", {}))
        arg_sets = [raw.get("args", {})]
        fixed = raw.get("cases") if isinstance(raw.get("cases"), list) else []
        arg_sets += fixed + raw.get("edge_cases", [])
        for args in arg_sets:
            for arg in args:
                if call is not None and arg not in params:
                    problem(at + ("args",), f"'{arg}' is not a parameter of {call}({', '.join(params)}).")
        _check_refs(raw.get("draw", {}), [], at + ("draw",), problem)
        for group in ("draw", "args"):
            for arg, spec in raw.get(group, {}).items():
                _check_intervals(spec, at + (group, arg), problem)
        _check_refs(raw.get("args", {}), drawn, at + ("args",), problem)
        if "select" in raw:
            try:
                parse_select(raw["select"])
            except ValueError as exc:
                problem(at + ("select",), f"{exc}. Write a numpy index such as '[:, 0:2]' or '[..., -1]'.")
        if raw.get("kind") == "example" and "expect" in raw and len(fixed) > 1:
            problem(at + ("expect",), "a literal expect: fits one argument set; split the cases into checks.")
        tolerance = Tolerance(**{**default_tolerance.as_dict(), **raw.get("tolerance", {})})
        checks.append(CheckSpec(
            name=name, kind=raw["kind"], points=float(raw.get("points", 1)),
            description=raw.get("description", ""), needs=tuple(raw.get("needs", ())),
            hidden=bool(raw.get("hidden", False)), call=call, args=raw.get("args", {}),
            draw=raw.get("draw", {}),
            cases=raw["cases"] if isinstance(raw.get("cases"), int) else default_cases,
            fixed_cases=tuple(fixed) or ((raw.get("args", {}),) if raw["kind"] == "example" else ()),
            edge_cases=tuple(raw.get("edge_cases", ())), compare=raw.get("compare", "values"),
            select=raw.get("select"), returns=raw.get("returns", {}), expect=raw.get("expect"),
            has_expect="expect" in raw, tolerance=tolerance, answer=raw.get("answer"),
            format=raw.get("format"), reference=raw.get("reference"),
            shape=tuple(raw.get("shape", ())), line=_line(lines, at)))
    imports = data.get("imports", {})
    if problems:
        raise SpecError(problems)
    limits = Limits(**data.get("limits", {}))
    return Task(id=data["id"], title=data["title"], version=str(data["version"]), kind=kind, folder=folder,
                spec_path=path, statement_path=files["statement"], reference_path=files["reference"],
                functions=functions, allowed_imports=tuple(imports.get("allowed", ())),
                stdlib_imports=tuple(imports.get("stdlib", ())), limits=limits,
                tolerance=default_tolerance, checks=tuple(checks),
                digest=_digest(path, files["reference"]))


def _check_refs(strategies: dict, known: list[str], at: tuple, problem) -> None:
    """Every {ref: name} must name a value drawn before it."""
    seen = list(known)
    for name, strategy in strategies.items():
        for ref in _refs_in(strategy):
            if ref not in seen:
                problem(at + (name,), f"{{ref: {ref}}} refers to nothing drawn before '{name}'. "
                                      "Draw it first (under draw:, or as an earlier argument).")
        seen.append(name)


def _refs_in(value):
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


def _digest(*paths: str) -> str:
    h = hashlib.sha256()
    for p in paths:
        if os.path.isfile(p):   # (a kit has no reference)
            with open(p, "rb") as f:
                h.update(f.read())
    return h.hexdigest()[:16]
