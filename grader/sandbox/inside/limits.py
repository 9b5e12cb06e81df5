"""The rlimits that carry a submission's resource limits out in a process.

Standard library only, and plain values only (the ``Limits`` record is the trusted side's,
grader/records/limits.py): ``apply`` also runs inside the sandbox (the fork server's workers,
the unsandboxed tier's worker). ``resource`` is imported where it is used: a Python without
it (Windows) imports this module all the same, and ``available`` says there are no rlimits.
"""

from __future__ import annotations

import os
import signal


def available() -> bool:
    """Whether this Python can set rlimits at all (not on Windows)."""
    try:
        import resource  # noqa: F401
    except ImportError:
        return False
    return True


def rlimits(
    *,
    memory_mib: int,
    file_mib: int,
    open_files: int,
    processes: int,
    submission_seconds: float,
    cpu: bool = True,
) -> list[tuple[int, int, int]]:
    """(resource, soft, hard) triples for a process that runs student code. ``cpu=False``
    leaves CPU time out, for a long-lived process that only forks such processes."""
    import resource

    mib = 1 << 20
    seconds = int(submission_seconds) + 5
    wanted = [
        (resource.RLIMIT_AS, memory_mib * mib, memory_mib * mib),
        (resource.RLIMIT_FSIZE, file_mib * mib, file_mib * mib),
        (resource.RLIMIT_NOFILE, open_files, open_files),
        (resource.RLIMIT_CORE, 0, 0),
    ]
    if cpu:
        wanted.append((resource.RLIMIT_CPU, seconds, seconds + 5))  # SIGXCPU before SIGKILL
    # Root ignores RLIMIT_NPROC (the cgroup's pids cap holds it there); the cap counts the
    # user's processes in /proc, so where there is none (macOS) there is no such cap.
    if hasattr(resource, "RLIMIT_NPROC") and os.path.isdir("/proc") and os.getuid() != 0:
        cap = processes + _process_count(os.getuid())
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


def apply(wanted: list[tuple[int, int, int]], best_effort: bool = False) -> list[int]:
    """Set the (resource, soft, hard) limits on this process and all it will start. With
    ``best_effort`` (the unsandboxed tier, on whatever the student's system allows: macOS
    refuses some), a limit the system refuses is left out; returns those left out."""
    import resource

    refused = []
    for which, soft, hard in wanted:
        try:
            resource.setrlimit(which, (soft, hard))
        except (ValueError, OSError):
            if not best_effort:
                raise
            refused.append(which)
    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the size cap fails, not kills
    return refused
