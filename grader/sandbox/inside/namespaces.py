"""Namespaces of its own for one worker (user, IPC and network), and a size-capped scratch
folder that dies with the process that made it (a tmpfs in a mount namespace of its own).

A warm worker shares its sandbox with the server and with the workers before it. In an IPC
namespace of its own, the SysV shared memory, semaphores and message queues it makes die
with it, so they cannot hold memory against the next student; in a network namespace of its
own it has no network at all, not even UDP. No privilege is needed: a new user namespace
grants the right to make the other two, and only the worker's own user and group are mapped
in it. Landlock, applied after this, forbids mounting anything.

The same user namespace grants a mount namespace, in which a tmpfs of a given size can be
mounted over the process's scratch folder: what it writes there is capped, charged to its
cgroup's memory, invisible from the machine, and gone when the last process of that
namespace is. This must happen before Landlock, which forbids every mount.

Imported by the fork server and the worker (standard library only); run as a script it is
the probe that tells the grader whether this works here (exit status 0; ``--mount``: the
capped tmpfs too).
"""

from __future__ import annotations

import ctypes
import os
import sys
import tempfile

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWIPC, CLONE_NEWNET = 0x00020000, 0x10000000, 0x08000000, 0x40000000
MS_NOSUID, MS_NODEV, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x4000, 0x40000


def _unshare(flags: int) -> None:
    uid, gid = os.getuid(), os.getgid()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(flags) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"unshare failed: {os.strerror(error)}")
    for path, text in (
        ("/proc/self/setgroups", "deny"),
        ("/proc/self/uid_map", f"{uid} {uid} 1"),
        ("/proc/self/gid_map", f"{gid} {gid} 1"),
    ):
        with open(path, "w") as f:
            f.write(text)


def enter_private(scratch: tuple[str, int] | None = None) -> None:
    """User, IPC and network namespaces of its own; with ``scratch`` (path, bytes), also a
    mount namespace with a tmpfs of at most that many bytes over that folder."""
    _unshare(CLONE_NEWUSER | CLONE_NEWIPC | CLONE_NEWNET | (CLONE_NEWNS if scratch else 0))
    if scratch:
        mount_scratch(*scratch)


def enter_scratch(path: str, size: int) -> None:
    """User and mount namespaces of its own, with a tmpfs of ``size`` bytes over ``path``
    (a fork server's scratch root, before it restricts itself)."""
    _unshare(CLONE_NEWUSER | CLONE_NEWNS)
    mount_scratch(path, size)


def mount_scratch(path: str, size: int) -> None:
    """In a mount namespace of this process's own: a tmpfs of ``size`` bytes over ``path``,
    owned by this process's user, mode 0700; the working directory moves onto it if it was
    ``path``."""
    libc = ctypes.CDLL(None, use_errno=True)
    # Nothing mounted here reaches the machine's namespace (the kernel already makes the
    # copy a slave when the user namespace is new; private says it outright).
    libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None)
    options = f"size={max(int(size), 4096)},mode=0700".encode()
    if libc.mount(b"tmpfs", os.fsencode(path), b"tmpfs", MS_NOSUID | MS_NODEV, options) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"mounting the scratch tmpfs failed: {os.strerror(error)}")
    try:
        here = os.getcwd()
    except OSError:
        here = None
    if here is None or os.path.realpath(here) == os.path.realpath(path):
        os.chdir(path)  # onto the new tmpfs, not the folder underneath it


if __name__ == "__main__":
    try:
        if "--mount" in sys.argv[1:]:
            enter_private((tempfile.gettempdir(), 1 << 20))
        else:
            enter_private()
    except OSError as exc:
        print(exc, file=sys.stderr)
        sys.exit(1)
