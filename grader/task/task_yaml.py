"""task.yaml -> a validated ``Task``; every error names the file, line and field, and the fix.

Validation has two layers: the published JSON Schema (``grader/schema/task.schema.json``,
also what editors use) for the shape of the file, then the rules a schema cannot express
(names that refer to each other, files that must exist, index expressions that must parse).
Each check's own fields are its kind's: ``read_task`` is given the kinds (a name -> a
check_kind.CheckKind; the grader's are grading/checks/, passed by ``grader.authoring.load_task``)
and asks each check's kind for its piece of the schema and its fields' reading.

``read_head`` reads what a worker is started with (limits, imports) by the same parse,
without the kinds, the schema or numpy: `grader check` starts one before the grading stack
is imported (grading/prestart.py).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import yaml

from grader.disk import cache_folder, write_entry
from grader.records.limits import Limits
from grader.task.check_kind import COMMON_FIELDS, CheckKind, Reading
from grader.task.spec import (
    DEFAULT_CASES,
    DEFAULT_DISPLAY,
    DEFAULT_HIDDEN_VISIBILITY,
    MISTAKES_FILE,
    SCHEMA_PATH,
    CheckSpec,
    MistakeSpec,
    SpecError,
    Task,
)
from grader.task.tolerance import Tolerance

if TYPE_CHECKING:  # (jsonschema is imported when a spec is read)
    from jsonschema.exceptions import ValidationError

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# The check kinds a task.yaml may name: name -> kind, in the order errors list them.
Kinds = Mapping[str, CheckKind[CheckSpec[Any]]]


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


def _walk(node: yaml.Node | None, at: tuple, lines: dict, problems: list, path: str) -> None:
    if node is None:
        return
    lines[at] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        seen = set()
        for key, value in node.value:
            name = key.value
            if name in seen:
                problems.append(
                    f"{path}:{key.start_mark.line + 1}: {_dotted(at + (name,))}: "
                    f"duplicate key. Keep one '{name}:' entry."
                )
            seen.add(name)
            _walk(value, at + (name,), lines, problems, path)
            lines[at + (name,)] = key.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, at + (i,), lines, problems, path)


def _dotted(at: tuple) -> str:
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


def check_schema(kinds: Kinds) -> dict[str, Any]:
    """The schema of one check: the common fields, then each kind's piece."""
    properties = copy.deepcopy(COMMON_FIELDS)
    properties["kind"] = {"enum": list(kinds)}
    return {
        "type": "object",
        "required": ["name", "kind"],
        "properties": properties,
        "allOf": [kind.schema() for kind in kinds.values()],
    }


def task_schema(kinds: Kinds) -> dict[str, Any]:
    """The schema in force: the published one with its check part made from ``kinds``."""
    with open(SCHEMA_PATH, encoding="utf-8") as f:
        schema = json.load(f)
    schema["$defs"]["check"] = check_schema(kinds)
    return schema


# kinds -> (the schema in force, its validator once built): made once per process
_schemas: dict[tuple, tuple[dict[str, Any], Any]] = {}


def _schema(kinds: Kinds) -> dict[str, Any]:
    key = tuple(kinds.items())
    if key not in _schemas:
        _schemas[key] = (task_schema(kinds), None)
    return _schemas[key][0]


def _validator(kinds: Kinds) -> Any:
    key = tuple(kinds.items())
    schema, validator = _schemas.get(key) or (_schema(kinds), None)
    if validator is None:
        import jsonschema  # only when a spec is read: its import is not free

        validator = jsonschema.Draft202012Validator(schema)
        _schemas[key] = (schema, validator)
    return validator


def _schema_problems(data: Any, lines: dict, path: str, kinds: Kinds) -> list[str]:
    from jsonschema.exceptions import best_match, relevance

    problems = []
    for error in sorted(_validator(kinds).iter_errors(data), key=relevance):
        if error.context:
            error = best_match(error.context) or error
        at = tuple(error.absolute_path)
        unknown = _unknown_keys(error)
        if unknown:
            at += (unknown[0],)
            text = (
                f"unknown field{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}."
                f"{_allowed_keys(error)}"
            )
        else:
            text = f"{error.message}.{_hint(error)}"
        problems.append(f"{path}:{_line(lines, at)}: {_dotted(at)}: {text}")
    # (a check without a kind meets every kind's rules, some of them alike: each said once)
    return list(dict.fromkeys(problems))[:10]


def _unknown_keys(error: ValidationError) -> list[str]:
    """Keys rejected by additionalProperties: false or a propertyNames list."""
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = set(error.schema.get("properties", {}))
        return [k for k in error.instance if k not in known]
    if "propertyNames" in error.relative_schema_path or "propertyNames" in error.schema_path:
        return [str(error.instance)]
    return []


def _allowed_keys(error: ValidationError) -> str:
    if error.validator == "additionalProperties":
        names = list(error.schema.get("properties", {}))
    elif error.validator == "enum":
        names = list(error.validator_value)
    else:
        return ""
    return f" Allowed here: {', '.join(names)}." if names else ""


def _hint(error: ValidationError) -> str:
    description = error.schema.get("description") if isinstance(error.schema, dict) else None
    if error.validator == "enum":
        return f" Use one of: {', '.join(map(str, error.validator_value))}."
    if error.validator == "required":
        return " Add it."
    if description:
        return f" ({description})"
    return ""


def _validity_marker(path: str, kinds: Kinds) -> str:
    """A cache entry named by the hash of the spec and the schema: same bytes, same verdict."""

    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read())
    h.update(json.dumps(_schema(kinds), sort_keys=True).encode())
    return os.path.join(cache_folder("valid-specs"), h.hexdigest()[:32])


def _known_valid(path: str, kinds: Kinds) -> bool:
    return os.path.exists(_validity_marker(path, kinds))


def _remember_valid(path: str, kinds: Kinds) -> None:
    # (a marker that cannot be written costs the schema check next time)
    write_entry(_validity_marker(path, kinds), b"")


# --------------------------------------------------------------------------- the task


@dataclass(frozen=True)
class TaskHead:
    """What a task's workers are started with: its limits and the imports it allows."""

    limits: Limits
    allowed_imports: tuple[str, ...]
    stdlib_imports: tuple[str, ...]
    display_imports: tuple[str, ...]


def _head(data: dict) -> TaskHead:
    imports = data.get("imports") or {}
    return TaskHead(
        limits=Limits(**(data.get("limits") or {})),
        allowed_imports=tuple(imports.get("allowed", ())),
        stdlib_imports=tuple(imports.get("stdlib", ())),
        display_imports=tuple(imports.get("display", DEFAULT_DISPLAY)),
    )


def _parsed(folder: str) -> tuple[str, str, object, dict[tuple, int]]:
    """(folder, task.yaml's path, its data, the line of each node); a SpecError when the
    folder, the file or its YAML is wrong."""
    folder = os.path.abspath(folder)
    path = os.path.join(folder, "task.yaml")
    if not os.path.isdir(folder):
        raise SpecError([f"{folder}: no such task folder. Give the folder that holds task.yaml."])
    if not os.path.isfile(path):
        raise SpecError(
            [f"{path}: missing. A task folder needs a task.yaml (see docs/task-writers.md: task.yaml)."]
        )
    data, lines, problems = _read_yaml(path)
    if data is None and not problems:
        problems = [f"{path}:1: the file is empty. Start with id:, title:, version:, functions:, checks:."]
    if problems:
        raise SpecError(problems)
    return folder, path, data, lines


def read_head(folder: str) -> TaskHead:
    """The limits and imports of the task in ``folder``, read as ``read_task`` reads them but
    not checked against the schema (the full read says what is wrong; a SpecError or a
    TypeError here for a file it cannot take)."""
    _, path, data, _ = _parsed(folder)
    if not isinstance(data, dict):
        raise SpecError([f"{path}:1: the file is not a mapping of fields"])
    return _head(data)


def read_task(folder: str, kinds: Kinds) -> Task:
    """The task in ``folder``, each check's ``kind:`` one of ``kinds``."""
    folder, path, data, lines = _parsed(folder)
    if not _known_valid(path, kinds):
        problems = _schema_problems(data, lines, path, kinds)
        if problems:
            raise SpecError(problems)
        _remember_valid(path, kinds)
    assert isinstance(data, dict)  # (the schema wants a mapping at the top)
    return _build(data, folder, path, lines, kinds)


def _is_kit(folder: str) -> bool:
    """A student kit (kit.py) has frozen cases and no reference."""
    try:
        with open(os.path.join(folder, "frozen", "manifest.json")) as f:
            return json.load(f).get("kit") is True
    except (OSError, ValueError, AttributeError):
        return False


def _build(data: dict, folder: str, path: str, lines: dict, kinds: Kinds) -> Task:
    from grader.task import edges  # (numpy: never for read_head, which grader check's head start asks)

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
    checks: list[CheckSpec[Any]] = []
    for i, raw in enumerate(data["checks"]):
        at = ("checks", i)
        _check_names(raw, at, checks, problem)
        if not kinds[raw["kind"]].fits(kind):
            article = "an" if raw["kind"][0] in "aeiou" else "a"
            fitting = [k.name for k in kinds.values() if k.fits(kind)]
            problem(
                at + ("kind",),
                f"{article} {raw['kind']} check does not fit a {kind} task. Use {', '.join(fitting)}.",
            )
        call = raw.get("call")
        if call is not None and call not in functions:
            problem(
                at + ("call",),
                f"'{call}' is not among functions: ({', '.join(functions)}). "
                "Declare it under functions: or fix the name.",
            )
        reading = Reading(
            raw,
            at,
            call,
            functions.get(call, ()),
            default_tolerance,
            data.get("cases", DEFAULT_CASES),
            problem,
        )
        checks.append(
            CheckSpec(
                name=raw["name"],
                kind=kinds[raw["kind"]],
                options=kinds[raw["kind"]].read(reading),
                points=float(raw.get("points", 1)),
                description=raw.get("description", ""),
                needs=tuple(raw.get("needs", ())),
                hidden=bool(raw.get("hidden", False)),
                call=call,
                line=_line(lines, at),
                hint=raw.get("hint", ""),
                edges=tuple(raw.get("edges", ())),
            )
        )
    parameters = {p for params in functions.values() for p in params}
    task_edges = edges.read(data.get("edges", {}), lambda at: _line(lines, at), problem, parameters)
    for i, check in enumerate(checks):
        for name in check.edges:
            if name not in {e.name for e in task_edges}:
                problem(
                    ("checks", i, "edges"),
                    f"'{name}' is not among the task's edges: "
                    f"({', '.join(e.name for e in task_edges) or 'none'}). Declare it under "
                    "edges: or fix the name.",
                )
    mistakes_path = os.path.join(folder, MISTAKES_FILE)
    mistakes = _mistakes(data, kind, functions, mistakes_path, lines, problem)
    if problems:
        raise SpecError(problems)
    head = _head(data)
    return Task(
        id=data["id"],
        title=data["title"],
        version=str(data["version"]),
        kind=kind,
        folder=folder,
        spec_path=path,
        statement_path=files["statement"],
        reference_path=files["reference"],
        functions=functions,
        allowed_imports=head.allowed_imports,
        stdlib_imports=head.stdlib_imports,
        limits=head.limits,
        display_imports=head.display_imports,
        tolerance=default_tolerance,
        checks=tuple(checks),
        digest=_digest(path, files["reference"]),
        mistakes=mistakes,
        mistakes_path=mistakes_path,
        edges=task_edges,
        hidden_visibility=data.get("hidden_visibility", DEFAULT_HIDDEN_VISIBILITY),  # (the schema's enum)
        attempts=data.get("attempts"),
    )


def _mistakes(
    data: dict,
    kind: str,
    functions: dict,
    mistakes_path: str,
    lines: dict,
    problem: Callable[[tuple, str], None],
) -> tuple[MistakeSpec, ...]:
    """The declared mistakes, with the rules a schema cannot express (whether mistakes.py
    defines each replacement is checked when it is imported: mistakes.py)."""
    declared = data.get("mistakes", [])
    if declared and kind != "functions":
        problem(
            ("mistakes",),
            "known mistakes are declared for a functions task only (a mistake "
            "replaces task functions). Remove mistakes:.",
        )
        return ()
    if declared and not os.path.isfile(mistakes_path):
        problem(
            ("mistakes",),
            f"file {mistakes_path} does not exist. Write the mistaken "
            "functions there (beside reference.py), or remove mistakes:.",
        )
    found: list[MistakeSpec] = []
    for i, raw in enumerate(declared):
        at = ("mistakes", i)
        if raw["name"] in {m.name for m in found}:
            problem(
                at + ("name",), f"mistake name '{raw['name']}' is used twice. Mistake names must be unique."
            )
        for function in raw["replaces"]:
            if function not in functions:
                problem(
                    at + ("replaces", function),
                    f"'{function}' is not among functions: "
                    f"({', '.join(functions)}). A mistake replaces task functions.",
                )
        found.append(
            MistakeSpec(raw["name"], raw["explanation"], tuple(raw["replaces"].items()), _line(lines, at))
        )
    return tuple(found)


def _check_names(
    raw: dict, at: tuple, earlier: list[CheckSpec[Any]], problem: Callable[[tuple, str], None]
) -> None:
    """A check's name is new, and what it needs comes before it (and is visible if it is)."""
    names = {c.name for c in earlier}
    hidden = {c.name for c in earlier if c.hidden}
    if raw["name"] in names:
        problem(at + ("name",), f"check name '{raw['name']}' is used twice. Check names must be unique.")
    for need in raw.get("needs", []):
        if need not in names:
            problem(
                at + ("needs",),
                f"'{need}' is not a check defined above this one. "
                "A check can only need checks listed before it.",
            )
        elif need in hidden and not raw.get("hidden", False):
            problem(
                at + ("needs",),
                f"'{need}' is hidden, and hidden checks run after every "
                "visible one. Make this check hidden too, or drop the need.",
            )


def _digest(*paths: str) -> str:
    h = hashlib.sha256()
    for p in paths:
        if os.path.isfile(p):  # (a kit has no reference)
            with open(p, "rb") as f:
                h.update(f.read())
    return h.hexdigest()[:16]
