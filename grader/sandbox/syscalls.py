"""No new sockets: a seccomp filter a worker applies to itself (pyseccomp, over libseccomp).

Landlock confines files and TCP but not connect() to a named UNIX socket: in the landlock
tier a worker could otherwise reach /run/docker.sock or the D-Bus system bus, and a network
namespace of its own does not help, since such sockets are found through the filesystem. A
worker needs no new socket at all (its channel is inherited), so socket() fails with EACCES,
and so does io_uring_setup (io_uring can open sockets past seccomp). Irreversible, and
inherited by every process the worker starts. Imported inside the sandbox.
"""
from __future__ import annotations

import errno
import importlib

DENIED = ("socket", "io_uring_setup")


def deny_new_sockets() -> None:
    import pyseccomp as seccomp
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in DENIED:
        rules.add_rule(seccomp.ERRNO(errno.EACCES), name)
    rules.load()


def available() -> bool:
    """Whether the filter can be made here (pyseccomp needs the system's libseccomp)."""
    try:
        importlib.import_module("pyseccomp")
    except (ImportError, RuntimeError, OSError):
        return False
    return True
