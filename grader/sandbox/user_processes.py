"""The processes of one user (a worker of the unprivileged tier runs as a user no other
process has): which are alive, the CPU time they have used, and killing all of them.

A process of that user cannot hide from these by leaving the worker's process tree
(double fork, setsid) or by making itself undumpable (which hands its /proc folder to
root): they read the user ids the kernel reports in /proc/PID/status, and the kill is the
kernel's own ``kill(-1, SIGKILL)`` sent as that user, which reaches every process the user
may signal in one pass (a process being killed cannot fork any more).
"""

from __future__ import annotations

import os
import signal
import time

from grader.sandbox import cpu_time

KILL_ROUNDS = 50


def _ids(pid: str) -> tuple[set[int], str] | None:
    """The user ids (real, effective, saved, filesystem) and the state of process ``pid``."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            text = f.read(4096)
    except OSError:
        return None
    ids: set[int] = set()
    state = "?"
    for line in text.split(b"\n"):
        if line.startswith(b"Uid:"):
            ids = {int(v) for v in line.split()[1:]}
        elif line.startswith(b"State:"):
            state = line.split()[1].decode(errors="replace") if len(line.split()) > 1 else "?"
    return ids, state


def pids(uid: int, zombies: bool = False) -> list[int]:
    """Live processes with ``uid`` among their user ids (dead ones not yet reaped with
    ``zombies``)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            seen = _ids(entry)
            if seen is not None and uid in seen[0] and (zombies or seen[1] not in ("Z", "X")):
                found.append(int(entry))
    return found


def cpu_seconds(uid: int) -> float:
    """CPU time used by the processes of ``uid`` alive now (each with its reaped children)."""
    return cpu_time.pids_seconds(pids(uid, zombies=True))


def kill_all(uid: int) -> bool:
    """SIGKILL every process of ``uid``, from a child of this process that becomes that user
    (as root), until none is alive; True when none is left."""
    for _ in range(KILL_ROUNDS):
        signalled = _kill_as(uid)
        if signalled is None:
            return False
        if not signalled or not pids(uid):
            return True
        time.sleep(0.005)  # (the killed are dying; once dead they are only zombies)
    return not pids(uid)


def _kill_as(uid: int) -> bool | None:
    """One ``kill(-1, SIGKILL)`` as ``uid``: whether it reached any process (None: the
    helper could not become that user). The child only makes system calls, then exits."""
    child = os.fork()
    if child == 0:
        code = 2
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            try:
                os.kill(-1, signal.SIGKILL)
                code = 0
            except ProcessLookupError:
                code = 1
        finally:
            os._exit(code)
    _, status = os.waitpid(child, 0)
    code = os.waitstatus_to_exitcode(status)
    return {0: True, 1: False}.get(code)
