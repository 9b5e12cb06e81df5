"""Resource limits for one submission, and the rlimits that carry them out in a process.

Standard library only: ``apply`` also runs inside the sandbox (the fork server's workers).
"""

from __future__ import annotations

import os
import resource
import signal
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


def rlimits(limits: Limits, cpu: bool = True) -> list[tuple[int, int, int]]:
    """(resource, soft, hard) triples for a process that runs student code. ``cpu=False``
    leaves CPU time out, for a long-lived process that only forks such processes."""
    mib = 1 << 20
    seconds = int(limits.submission_seconds) + 5
    wanted = [
        (resource.RLIMIT_AS, limits.memory_mib * mib, limits.memory_mib * mib),
        (resource.RLIMIT_FSIZE, limits.file_mib * mib, limits.file_mib * mib),
        (resource.RLIMIT_NOFILE, limits.open_files, limits.open_files),
        (resource.RLIMIT_CORE, 0, 0),
    ]
    if cpu:
        wanted.append((resource.RLIMIT_CPU, seconds, seconds + 5))  # SIGXCPU before SIGKILL
    if os.getuid() != 0:  # root ignores RLIMIT_NPROC; the cgroup's pids cap holds it there
        cap = limits.processes + _process_count(os.getuid())
        wanted.append((resource.RLIMIT_NPROC, cap, cap))
    return wanted


def _process_count(uid: int) -> int:
    count = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                count += os.stat(f"/proc/{entry}").st_uid == uid
            except OSError:
                pass
    return count


def apply(wanted: list[tuple[int, int, int]]) -> None:
    """Set the (resource, soft, hard) limits on this process and all it will start."""
    for which, soft, hard in wanted:
        resource.setrlimit(which, (soft, hard))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the size cap fails, not kills
