"""Per-call time limits that follow the reference.

A call's limit is ``call_multiple`` times what the trusted reference needs on the same case,
at least ``call_floor_seconds`` and at most the task's ``call_seconds`` (Limits). The limit
counts the CPU time of the worker's processes (launcher.py reads it from /proc, never from
the worker), so a loaded machine slows a call without timing it out; a wall-clock backstop of
a few times the limit still stops a call that sleeps or blocks. The reference's times are
measured once per prepared task (ReferenceTimes; in a batch: in the parent, before the pool
forks), on the very cases the checks send, frozen ones included, and kept on disk beside the
case cache.
"""

from __future__ import annotations

import dataclasses
import os
import platform
import time
from types import ModuleType
from typing import Any

import numpy as np

from grader.cases.generate import expected_output, generated_by
from grader.cases.model import CaseSet, ReferenceFailed
from grader.disk import entry_name, read_json, versions, write_json
from grader.records.limits import CallLimit, Limits, absolute_limit
from grader.task.frameworks import allowed_frameworks
from grader.task.spec import CheckSpec, Task

__all__ = ["CallLimit", "ReferenceTimes", "absolute_limit", "derived_limit"]

BACKSTOP_MULTIPLE = 4  # wall-clock time a call may take, in multiples of its CPU limit
BACKSTOP_EXTRA_SECONDS = 1.0  # ... and at least this much more than its limit
REPEATS, REPEAT_BELOW = 3, 0.05  # a case faster than this is timed again (the least counts)


def derived_limit(limits: Limits, reference_seconds: float | None) -> CallLimit:
    """The limit of a call on a case the reference needs ``reference_seconds`` for
    (None: not measured, as in a kit, which has no reference: the fixed limit)."""
    if limits.call_limit == "absolute" or reference_seconds is None:
        return absolute_limit(limits)
    wanted = max(limits.call_floor_seconds, limits.call_multiple * reference_seconds)
    seconds = min(wanted, limits.call_seconds)
    why = (
        f"{limits.call_multiple:g} × the reference's {_duration(reference_seconds)} on this case, "
        f"at least {limits.call_floor_seconds:g} s"
    )
    if wanted > limits.call_seconds:
        why += f", at most the task's {limits.call_seconds:g} s"
    backstop = min(max(BACKSTOP_MULTIPLE * seconds, seconds + BACKSTOP_EXTRA_SECONDS), limits.call_seconds)
    return CallLimit(seconds, max(backstop, seconds), why)


# A framework's first operations in a script (kernels chosen, tensors converted, Keras layers
# built) cost CPU time that the numpy reference never spends: a script of a task that allows
# one gets at least this much CPU time, whatever its reference needs. Its import and start-up
# are not counted at all: the worker makes them before the script's clock starts (preload.py).
FRAMEWORK_FLOOR_SECONDS = 5.0


@dataclasses.dataclass
class ReferenceTimes:
    """The reference's CPU times on one task's cases: measured once per prepared task (in a
    batch, before the pool forks), on the very cases the checks send, and kept on disk per
    machine beside the case cache. None of it without a reference (a kit)."""

    task: Task
    reference: ModuleType | None
    freeze_digest: str  # "" without a freeze
    use_disk: bool = True
    per_check: dict[str, list[float]] = dataclasses.field(default_factory=dict)
    # The most any check measured on one case (a function and its arguments' values, arrays
    # by shape and dtype): two checks that send the same case must give it the same limit,
    # or a slow-but-correct call could pass in one and time out in the other on timing noise.
    by_case: dict[tuple, float] = dataclasses.field(default_factory=dict)
    script: float | None = None

    def seconds(self, check: CheckSpec, cases: CaseSet) -> list[float] | None:
        """The reference's CPU time on each of ``cases.cases`` (in their order)."""
        if self.reference is None:
            return None
        if check.name in self.per_check:
            return self.per_check[check.name]
        key = _key(self.task, self.freeze_digest, check, len(cases.cases))
        found = _read(key) if self.use_disk else None
        if found is None or len(found) != len(cases.cases):
            found = [_time_one(self.task, self.reference, check, args) for args in cases.cases]
            if self.use_disk:
                _write(key, found)
        self.per_check[check.name] = found
        for args, t in zip(cases.cases, found):
            case = _case(self.task, check, args)
            self.by_case[case] = max(t, self.by_case.get(case, 0.0))
        return found

    def pooled(self, check: CheckSpec, cases: CaseSet, seconds: list[float]) -> list[float]:
        """``seconds`` (a check's measurement, per case) raised to the most any check of the
        task measured on the same case."""
        return [
            max(t, self.by_case.get(_case(self.task, check, args), t))
            for args, t in zip(cases.cases, seconds)
        ]

    def script_limit(self, limits: Limits) -> CallLimit:
        """The limit of a script task's run: ``call_multiple`` times the CPU time the
        reference needs for everything the task's checks look at (measured here, on the
        grader's side), at least ``call_floor_seconds`` (FRAMEWORK_FLOOR_SECONDS for a task
        that allows a framework), at most ``call_seconds``; the fixed limit for a kit."""
        if limits.call_limit == "absolute" or self.reference is None:
            return absolute_limit(limits)
        if self.script is None:
            self.script = _script_seconds(self.task, self.reference)
        seconds = self.script
        frameworks = allowed_frameworks(self.task.allowed_imports)
        floor = max(limits.call_floor_seconds, FRAMEWORK_FLOOR_SECONDS if frameworks else 0.0)
        limit = derived_limit(dataclasses.replace(limits, call_floor_seconds=floor), seconds)
        why = (
            f"{limits.call_multiple:g} × the reference's {_duration(seconds)} for this script, "
            f"at least {floor:g} s"
        )
        if frameworks:
            why += f" ({' or '.join(f.label for f in frameworks)} allowed; its import is not counted)"
        if limit.seconds >= limits.call_seconds and limits.call_multiple * seconds > limits.call_seconds:
            why += f", at most the task's {limits.call_seconds:g} s"
        return dataclasses.replace(limit, why=why)


def _script_seconds(task: Task, reference: ModuleType) -> float:
    """The least CPU time of a few computations of every reference value the script's
    checks compare with (the reference's answer and tables)."""
    computes = [c for c in task.checks if c.kind.compares_with_reference_value()]
    best = float("inf")
    for _ in range(REPEATS):
        start = time.process_time()
        for check in computes:
            try:
                check.kind.reference_value(reference, check)
            except Exception:
                pass  # (a broken reference is reported by the checks themselves)
        best = min(best, time.process_time() - start)
        if best >= REPEAT_BELOW:
            break
    return best


def _duration(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.3g} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{max(seconds, 1e-6) * 1e6:.3g} µs"


# --------------------------------------------------------------------------- measuring


def _case(task: Task, check: CheckSpec, args: dict[str, Any]) -> tuple:
    shown = tuple(
        sorted(
            (str(k), (v.shape, str(v.dtype)) if isinstance(v, np.ndarray) else repr(v))
            for k, v in args.items()
        )
    )
    return (task.id, check.call, shown)


def _time_one(task: Task, reference: ModuleType, check: CheckSpec, args: dict[str, Any]) -> float:
    """The least CPU time (all threads: the worker's BLAS has one) of a few runs; a case
    the reference raises on is not timed here (making the cases reports it)."""

    best = float("inf")
    for _ in range(REPEATS):
        start = time.process_time()
        try:
            expected_output(task, reference, check, args)
        except ReferenceFailed:
            return 0.0
        best = min(best, time.process_time() - start)
        if best >= REPEAT_BELOW:
            break
    return best


def _key(task: Task, freeze_digest: str, check: CheckSpec, count: int) -> str:
    # Frozen cases are named by the freeze's digest; generated ones by the versions that
    # made them (which costs importlib.metadata: not paid by a frozen task).
    made_by = versions("numpy") if freeze_digest else generated_by()
    return entry_name(
        f"{task.id}-{check.name}",
        made_by,
        task.digest,
        freeze_digest,
        repr(check),
        count,
        platform.node(),
        platform.machine(),
        os.cpu_count(),
    )


def _read(key: str) -> list[float] | None:
    data = read_json("timings", key)
    if not isinstance(data, list) or not all(type(v) is float and v >= 0 for v in data):
        return None
    return data


def _write(key: str, seconds: list[float]) -> None:
    write_json("timings", key, seconds)
