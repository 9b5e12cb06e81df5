"""System calls a worker forbids itself: a seccomp filter (pyseccomp, over libseccomp).

Sockets: Landlock confines files and TCP but not connect() to a named UNIX socket: in the
landlock tier a worker could otherwise reach /run/docker.sock or the D-Bus system bus, and a
network namespace of its own does not help, since such sockets are found through the
filesystem. A worker needs no new socket at all (its channel is inherited), so socket()
fails with EACCES, and so does io_uring_setup (io_uring can open sockets past seccomp).

Keys: the kernel's keyrings are shared by every process of a user (and, through the session
keyring, by a process and all it starts), past every namespace: a worker could read the
grader's keys or leave a note there for the next student. So keyctl, add_key and
request_key fail with EPERM, as container runtimes' default profiles do, in every tier.

IPC: SysV shared memory, message queues and semaphores, and POSIX message queues, live in
the kernel past the process that made them and are shared by every process of an IPC
namespace: where a worker has no IPC namespace of its own (the unprivileged tier; the
landlock tier without user namespaces; rlimits) one could hold memory or leave a note there
for the next. numpy needs none of them, so their calls fail with EPERM.

Processes: where a worker is in no PID namespace of its own and no cgroup that keeps the CPU
time of processes that ended, a process it starts could outlive it (setsid, double fork) or
compute where its time is never counted. So it may start none: clone without CLONE_THREAD,
fork and vfork fail with EPERM; threads are still allowed (frameworks start thread pools),
and clone3, whose flags a filter cannot read, fails with ENOSYS, after which the C library
makes its threads with clone.

Irreversible, and inherited by every process the worker starts. Imported inside the sandbox.
"""

from __future__ import annotations

import errno
import importlib
from types import ModuleType

SOCKETS = ("socket", "io_uring_setup")
KEYS = ("keyctl", "add_key", "request_key")
IPC = (
    "shmget",
    "shmat",
    "shmctl",
    "msgget",
    "msgsnd",
    "msgrcv",
    "msgctl",
    "semget",
    "semop",
    "semtimedop",
    "semctl",
    "mq_open",
    "mq_unlink",
    "mq_timedsend",
    "mq_timedreceive",
    "mq_notify",
    "mq_getsetattr",
)
NEW_PROCESSES = ("fork", "vfork")
CLONE_THREAD = 0x00010000


# The libraries pyseccomp loads, by the names their packages install. pyseccomp looks them up
# with ctypes' find_library, which runs `ldconfig -p` (a process each, ~3 ms, in the grader
# and again in every new worker); a name that loads is given instead, else the lookup runs.
_SONAMES = {"c": "libc.so.6", "seccomp": "libseccomp.so.2"}


def _pyseccomp() -> ModuleType:
    import ctypes
    import ctypes.util

    lookup = ctypes.util.find_library

    def known(name: str) -> str | None:
        soname = _SONAMES.get(name)
        if soname is not None:
            try:
                ctypes.CDLL(soname)
                return soname
            except OSError:
                pass
        return lookup(name)

    ctypes.util.find_library = known
    try:
        return importlib.import_module("pyseccomp")
    finally:
        ctypes.util.find_library = lookup


def deny(sockets: bool = False, keys: bool = False, ipc: bool = False, processes: bool = False) -> None:
    """Load one filter forbidding the asked-for groups (nothing to do if none)."""
    if not (sockets or keys or ipc or processes):
        return
    seccomp = _pyseccomp()

    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in SOCKETS if sockets else ():
        rules.add_rule(seccomp.ERRNO(errno.EACCES), name)
    for name in KEYS if keys else ():
        rules.add_rule(seccomp.ERRNO(errno.EPERM), name)
    for name in IPC if ipc else ():
        rules.add_rule(seccomp.ERRNO(errno.EPERM), name)
    if processes:
        for name in NEW_PROCESSES:
            rules.add_rule(seccomp.ERRNO(errno.EPERM), name)
        rules.add_rule(
            seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, CLONE_THREAD, 0)
        )
        rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    rules.load()


def available() -> bool:
    """Whether the filter can be made here (pyseccomp needs the system's libseccomp)."""
    try:
        _pyseccomp()
    except (ImportError, RuntimeError, OSError):
        return False
    return True
