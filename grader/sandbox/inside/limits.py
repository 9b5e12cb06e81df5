"""The rlimits that carry a submission's resource limits out in a process.

Standard library only, and plain values only (the ``Limits`` record is the trusted side's,
grader/records/limits.py): ``apply`` also runs inside the sandbox (the fork server's workers).
"""

from __future__ import annotations

import os
import resource
import signal


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
    if os.getuid() != 0:  # root ignores RLIMIT_NPROC; the cgroup's pids cap holds it there
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


def apply(wanted: list[tuple[int, int, int]]) -> None:
    """Set the (resource, soft, hard) limits on this process and all it will start."""
    for which, soft, hard in wanted:
        resource.setrlimit(which, (soft, hard))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the size cap fails, not kills
