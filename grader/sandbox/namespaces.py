"""Namespaces of its own for one warm worker: user, IPC and network.

A warm worker shares its sandbox with the server and with the workers before it. In an IPC
namespace of its own, the SysV shared memory, semaphores and message queues it makes die
with it, so they cannot hold memory against the next student; in a network namespace of its
own it has no network at all, not even UDP. No privilege is needed: a new user namespace
grants the right to make the other two, and only the worker's own user and group are mapped
in it. Landlock, applied after this, forbids mounting anything.

Imported by the fork server (standard library only); run as a script it is the probe that
tells the grader whether this works here (exit status 0).
"""
from __future__ import annotations

import ctypes
import os
import sys

CLONE_NEWUSER, CLONE_NEWIPC, CLONE_NEWNET = 0x10000000, 0x08000000, 0x40000000


def enter_private() -> None:
    uid, gid = os.getuid(), os.getgid()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWIPC | CLONE_NEWNET) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"unshare failed: {os.strerror(error)}")
    for path, text in (("/proc/self/setgroups", "deny"), ("/proc/self/uid_map", f"{uid} {uid} 1"),
                       ("/proc/self/gid_map", f"{gid} {gid} 1")):
        with open(path, "w") as f:
            f.write(text)


if __name__ == "__main__":
    try:
        enter_private()
    except OSError as exc:
        print(exc, file=sys.stderr)
        sys.exit(1)
