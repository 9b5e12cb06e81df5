"""The kernel's key retention service, kept away from workers.

Every process inherits its parent's *session keyring*: without care a worker could read the
keys of the grader (or of whoever started it) and leave keys there for the next student's
worker. So the grader starts every worker, and every fork server, in a new anonymous session
keyring of its own (``join_new_session``, between fork and exec), and each worker forbids
itself the key system calls altogether (syscalls.py). glibc has no wrapper for ``keyctl``,
hence the raw system call.

Standard library only: also imported inside the sandbox.
"""

from __future__ import annotations

import ctypes
import platform

KEYCTL_JOIN_SESSION_KEYRING = 1
SYS_KEYCTL = {
    "x86_64": 250,
    "amd64": 250,
    "aarch64": 219,
    "arm64": 219,
    "riscv64": 219,
    "i386": 288,
    "i686": 288,
    "armv7l": 311,
    "ppc64le": 130,
    "ppc64": 130,
    "s390x": 280,
    "loongarch64": 219,
}


# Looked up once, at import: join_new_session also runs between fork and exec.
_NUMBER = SYS_KEYCTL.get(platform.machine().lower()) if platform.system() == "Linux" else None


def join_new_session() -> bool:
    """Replace this process's session keyring with a new, empty, anonymous one (inherited
    by all it starts). False where there is no key system to speak of (not Linux, an unknown
    architecture, or keyctl refused, e.g. by a container runtime's own seccomp filter)."""
    if _NUMBER is None:
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return (
        libc.syscall(ctypes.c_long(_NUMBER), ctypes.c_int(KEYCTL_JOIN_SESSION_KEYRING), ctypes.c_void_p(None))
        >= 0
    )
