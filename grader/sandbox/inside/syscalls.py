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

Irreversible, and inherited by every process the worker starts. Imported inside the sandbox.
"""
from __future__ import annotations

import errno
import importlib

SOCKETS = ("socket", "io_uring_setup")
KEYS = ("keyctl", "add_key", "request_key")


def deny(sockets: bool = False, keys: bool = False) -> None:
    """Load one filter forbidding the asked-for groups (nothing to do if neither)."""
    if not (sockets or keys):
        return
    import pyseccomp as seccomp
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in SOCKETS if sockets else ():
        rules.add_rule(seccomp.ERRNO(errno.EACCES), name)
    for name in KEYS if keys else ():
        rules.add_rule(seccomp.ERRNO(errno.EPERM), name)
    rules.load()


def available() -> bool:
    """Whether the filter can be made here (pyseccomp needs the system's libseccomp)."""
    try:
        importlib.import_module("pyseccomp")
    except (ImportError, RuntimeError, OSError):
        return False
    return True
