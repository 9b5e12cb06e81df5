"""A submission's resource limits and one call's limit: plain records the task reads from its
task.yaml, the grading derives per call (call_limits.py) and the sandbox carries out."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Resource limits for one submission (documented defaults fit numpy exercises)."""

    memory_mib: int = 2048
    # A call's limit: by default derived from the reference's time on that case
    # (call_limits.py: call_multiple x it, at least call_floor_seconds), never above
    # call_seconds; "absolute": call_seconds for every call.
    call_seconds: float = 10.0
    call_multiple: float = 100.0
    call_floor_seconds: float = 0.5
    call_limit: str = "derived"  # or "absolute"
    submission_seconds: float = 60.0
    file_mib: int = 64
    open_files: int = 256
    processes: int = 64
    output_chars: int = 4000  # of stdout/stderr shown per call
    scratch_mib: int = 256  # the worker's private folder (a tmpfs, charged to its memory)
    # Modules a worker imports before it says hello (the frameworks the task allows that are
    # installed: frameworks.preload); set by the grader, never by a task.yaml.
    preload: tuple[str, ...] = ()


@dataclass(frozen=True)
class CallLimit:
    """The limit of one call: ``seconds`` of CPU time, ``backstop`` of wall-clock time
    (whatever the CPU time), and why it is what it is, in words for the report."""

    seconds: float
    backstop: float
    why: str


def absolute_limit(limits: Limits) -> CallLimit:
    """``call_seconds`` of wall-clock time, as every call had before limits were derived."""
    return CallLimit(
        limits.call_seconds, limits.call_seconds, f"the fixed limit of {limits.call_seconds:g} s per call"
    )
