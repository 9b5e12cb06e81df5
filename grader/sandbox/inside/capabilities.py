"""No capability at all, even as root: for a worker that cannot have a user namespace of its
own (namespaces.py), which would otherwise take them away.

A grader run as root in the landlock tier (typically a container that refuses user
namespaces, which is also why bwrap failed there) would start its workers with every
capability: raise their own limits, renice, and worse. This empties the bounding, ambient,
effective, permitted and inheritable sets and locks the securebits so that root gains
nothing back on execve. Standard library only; imported inside the sandbox.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct

PR_CAPBSET_DROP, PR_SET_SECUREBITS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 24, 28, 47, 4
SECBIT_NOROOT, SECBIT_NOROOT_LOCKED = 1 << 0, 1 << 1
SECBIT_NO_SETUID_FIXUP, SECBIT_NO_SETUID_FIXUP_LOCKED = 1 << 2, 1 << 3
SECBIT_KEEP_CAPS_LOCKED = 1 << 5
LINUX_CAPABILITY_VERSION_3 = 0x20080522


def drop_all() -> None:
    libc = ctypes.CDLL(None, use_errno=True)

    def check(result: int, what: str) -> None:
        if result != 0:
            error = ctypes.get_errno()
            raise OSError(error, f"{what}: {os.strerror(error)}")

    check(
        libc.prctl(
            PR_SET_SECUREBITS,
            SECBIT_NOROOT
            | SECBIT_NOROOT_LOCKED
            | SECBIT_NO_SETUID_FIXUP
            | SECBIT_NO_SETUID_FIXUP_LOCKED
            | SECBIT_KEEP_CAPS_LOCKED,
            0,
            0,
            0,
        ),
        "locking the securebits",
    )
    for capability in range(64):
        if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            if ctypes.get_errno() == errno.EINVAL:
                break  # past the last capability this kernel knows
            check(-1, f"dropping capability {capability} from the bounding set")
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)  # absent on old kernels: fine
    header = ctypes.create_string_buffer(struct.pack("=Ii", LINUX_CAPABILITY_VERSION_3, 0))
    data = ctypes.create_string_buffer(24)  # two cap_user_data_t of three zero u32 each
    check(libc.capset(header, data), "clearing the capability sets")
