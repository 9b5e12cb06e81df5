"""The argument sets of a check, with the reference's expected output for each.

They are the same for every student (derandomized), so they are built once per task and
check and reused: in memory by the prepared task (prepared.py), for a batch too, on disk (``$GRADER_CACHE_DIR``, default
``~/.cache/grader``) across runs. A cache entry is keyed by the task's digest, the check's
definition and the versions of the grader, Hypothesis and numpy; a missing, stale or
unreadable entry is simply rebuilt.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

import numpy as np

from grader.cases import freeze_files as frozen
from grader.cases.model import CaseSet, CasesFailed, ReferenceFailed
from grader.disk import cache_folder, entry_name, read_entry, versions, write_entry
from grader.sandbox import wire
from grader.task.edges import Edge, judged_by
from grader.task.reference import call_reference
from grader.task.spec import CheckSpec, SpecError, Task
from grader.task.strategies import literal_case

CACHE_FORMAT = 3  # 2: numpy scalars travel as 0-d arrays (were 1-d); 3: recipes of drawn arrays
_CACHE_CAPS = wire.Caps(json_bytes=64 << 20, blob_count=1 << 20, total_bytes=4 << 30)


def split_arguments(params: tuple[str, ...], args: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """Pass the leading parameters by position (as the statement's examples do), the rest
    by keyword."""
    positional = []
    for name in params:
        if name not in args:
            break
        positional.append(args[name])
    keywords = {k: v for k, v in args.items() if k not in params[: len(positional)]}
    return positional, keywords


def expected_output(task: Task, reference: ModuleType, check: CheckSpec, args: dict[str, Any]) -> Any:
    positional, keywords = split_arguments(task.functions[check.function()], args)
    try:
        return call_reference(reference, check.function(), positional, keywords)
    except Exception as exc:
        raise ReferenceFailed(
            f"the reference solution raised {type(exc).__name__}: "
            f"{str(exc)[:300]} on {check.call}({_shown_args(args)}); "
            f"fix {task.reference_path}"
        ) from None


def _shown_args(args: dict) -> str:
    """Arguments in one short line: an array by its shape and dtype, a value by its repr."""

    def shown(value: object) -> str:
        if isinstance(value, np.ndarray):
            return f"<array of shape {value.shape}, {value.dtype}>"
        text = repr(value)
        return text if len(text) <= 80 else text[:77] + "..."

    return ", ".join(f"{name}={shown(value)}" for name, value in args.items())


def case_set(
    task: Task,
    reference: ModuleType | None,
    check: CheckSpec,
    use_disk: bool = True,
    freeze: frozen.Freeze | None = None,
) -> CaseSet:
    """The check's cases and expected outputs: the ``freeze``'s where the task has one
    (never generated again: freeze_files.py), else generated here (cached on disk by the versions
    that made them)."""
    if freeze is not None:
        return frozen.frozen_cases(freeze, check)
    if reference is None:
        raise SpecError([f"{task.folder}: no reference and no frozen cases: a task needs one"])
    key = _key(task, check)
    found = _read(key) if use_disk else None
    if found is None:
        kind = check.kind
        literal = [literal_case(c) for c in check.options.literal_cases]
        generated = []
        if kind.draws_cases():
            from grader.task.hypothesis_driver import collect

            try:
                generated = collect(check, avoided_edges(task, check, literal))
            except Exception as exc:  # Hypothesis's errors have no common base worth naming
                raise CasesFailed(
                    f"its cases cannot be generated ({type(exc).__name__}: "
                    f"{str(exc)[:500]}); check its draw: and args: ranges"
                ) from None
        cases = literal + [drawn.args for drawn in generated]
        needs_expected = kind.reference_computes_expected(check.options)
        expected = [expected_output(task, reference, check, c) if needs_expected else None for c in cases]
        found = CaseSet(
            cases, expected, len(literal), [{} for _ in literal] + [drawn.recipes for drawn in generated]
        )
        if use_disk:
            _write(key, found)
    return found


def tried_cases(check: CheckSpec, case_set_of: Callable[[CheckSpec], CaseSet]) -> CaseSet:
    """What a check tries, with the expected outputs: the case the task gives with its
    expected value (its kind says: an example's literal expect:), else its case set
    (``case_set_of``): the prepared task's, or those ``grader freeze`` froze."""
    given = check.kind.given_case(check.options)
    if given is None:
        return case_set_of(check)
    args, expected = given
    return CaseSet([literal_case(args)], [expected], 1)


def avoided_edges(task: Task, check: CheckSpec, literal_cases: Iterable[dict[str, Any]]) -> tuple[Edge, ...]:
    """The task's edges a check's drawn cases keep clear of: those it does not judge
    (edges.py: it lists no case on them and does not name them)."""

    return tuple(e for e in task.edges if not judged_by(e, literal_cases, check.edges))


def reference_value(reference: ModuleType | None, check: CheckSpec, freeze: frozen.Freeze | None) -> Any:
    """What a script check compares with: the ``freeze``'s value, else the reference's."""

    if freeze is not None:
        return frozen.value(freeze, check)

    if reference is None:
        raise SpecError([f"no reference and no frozen value for check '{check.name}'"])
    return check.kind.reference_value(reference, check)


def generated_by() -> str:
    """What generated cases depend on besides the task: the cache's format, the grader's,
    Hypothesis's and numpy's versions (looked up once per process)."""
    return f"{CACHE_FORMAT}/{versions('hypothesis', 'numpy')}"


def _key(task: Task, check: CheckSpec) -> str:
    return entry_name(f"{task.id}-{check.name}", generated_by(), task.digest, repr(check))


def cache_dir() -> str:
    return cache_folder("cases")


def _read(key: str) -> CaseSet | None:
    return read_entry(os.path.join(cache_dir(), key + ".frame"), _decode)


def _decode(data: bytes) -> CaseSet:
    header, blobs = wire.unpack(data, _CACHE_CAPS)
    return CaseSet(
        wire.decode(header["cases"], blobs, _CACHE_CAPS),
        wire.decode(header["expected"], blobs, _CACHE_CAPS),
        int(header["literal_count"]),
        list(header["recipes"]),
    )


def _write(key: str, cases: CaseSet) -> None:
    try:
        blobs: list[bytes] = []
        header = {
            "cases": wire.encode(cases.cases, blobs),
            "expected": wire.encode(cases.expected, blobs),
            "literal_count": cases.literal_count,
            "recipes": cases.recipes,
        }
        data = wire.pack(header, blobs)
    except (TypeError, ValueError):
        return  # (a value the wire does not carry: not kept, which only costs time)
    write_entry(os.path.join(cache_dir(), key + ".frame"), data)
