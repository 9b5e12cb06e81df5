"""Landlock: the worker restricts itself before it loads any student code (Linux >= 5.13).

Used where bubblewrap cannot run. The policy allows reading the Python runtime and the
submission, writing only the private temporary folder, no TCP bind/connect (ABI >= 4),
and (ABI >= 6) no signals or abstract unix sockets outside the sandbox: a submission then
cannot read the reference or other students' files, reach the network, or kill or trace
the grader, although it runs as the same user. Irreversible, and inherited by children.

This file is imported by the worker (standard library only) and by the grader (for
``abi_version``).
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446  # same on all arches
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
FILE_RIGHTS_BY_ABI = {1: EXECUTE | WRITE_FILE | READ_FILE, 3: 1 << 14, 5: 1 << 15}
FS_BITS_BY_ABI = {1: 13, 2: 14, 3: 15, 4: 15, 5: 16}  # how many access bits each ABI knows
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1


class LandlockError(OSError):
    pass


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def abi_version() -> int:
    """The kernel's Landlock ABI version, 0 where there is none."""
    if not sys.platform.startswith("linux"):  # (no os.uname on Windows; no Landlock off Linux)
        return 0
    try:
        version = _libc().syscall(
            SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION)
        )
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


def _fs_rights(abi: int) -> int:
    bits = FS_BITS_BY_ABI.get(abi, 16)
    return (1 << bits) - 1


def _file_rights(abi: int) -> int:
    return sum(v for k, v in FILE_RIGHTS_BY_ABI.items() if abi >= k)


# What frameworks read of their own process (TensorFlow aborts without its cmdline; PyTorch
# reads maps and environ; thread pools size themselves from status, stat, cpuset, cgroup),
# granted file by file to the process's own /proc/PID: never mem, pagemap, fd/, task/ (a
# thread's folder holds its mem too), nor any other process's entries.
OWN_PROCESS_FILES = (
    "cmdline",
    "comm",
    "environ",
    "maps",
    "stat",
    "statm",
    "status",
    "cgroup",
    "cpuset",
    "mounts",
    "mountinfo",
    "limits",
    "auxv",
)
# Each allowed /proc entry stays open (O_PATH, which reads nothing): procfs makes a new inode
# whenever an entry is looked up afresh, and a rule holds only for the inode it was made on.
_pinned: list[int] = []


def own_process_paths(names: tuple[str, ...] = OWN_PROCESS_FILES) -> list[str]:
    """This process's own entries among ``names``, as /proc/PID/NAME (not through /proc/self,
    which would name whichever process asks)."""
    folder = os.path.realpath("/proc/self")
    return [os.path.join(folder, name) for name in names if name in OWN_PROCESS_FILES]


def restrict(read_paths: list[str], write_paths: list[str], own_process: bool = False) -> int:
    """Apply the policy to this process; returns the ABI used. Raises LandlockError.
    ``own_process``: also read this process's OWN_PROCESS_FILES (and no other of /proc/PID)."""
    abi = abi_version()
    if abi < 1:
        raise LandlockError("Landlock is not available in this kernel")
    libc = _libc()
    handled_fs = _fs_rights(abi)
    handled_net = NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0
    attr = struct.pack("=QQQ", handled_fs, handled_net, scoped)
    size = 8 if abi < 4 else (16 if abi < 6 else 24)
    buf = ctypes.create_string_buffer(attr[:size], size)
    ruleset = libc.syscall(SYS_CREATE_RULESET, buf, ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        raise LandlockError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        read_dir = EXECUTE | READ_FILE | READ_DIR
        own = own_process_paths() if own_process else []
        for path, rights in (
            [(p, read_dir) for p in read_paths]
            + [(p, READ_FILE) for p in own]
            + [(p, handled_fs) for p in write_paths]
        ):
            _allow(libc, ruleset, path, rights, abi, keep=path in own)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise LandlockError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if libc.syscall(SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            raise LandlockError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)
    return abi


def _allow(libc: ctypes.CDLL, ruleset: int, path: str, rights: int, abi: int, keep: bool = False) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except FileNotFoundError:
        return  # nothing there to allow
    try:
        if not os.path.isdir(path):
            rights &= _file_rights(abi)  # directory rights on a file are an error
        rule = struct.pack("=Qi", rights, fd)  # struct landlock_path_beneath_attr (packed)
        buf = ctypes.create_string_buffer(rule, len(rule))
        if (
            libc.syscall(
                SYS_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(RULE_PATH_BENEATH), buf, ctypes.c_uint32(0)
            )
            != 0
        ):
            raise LandlockError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
    except BaseException:
        os.close(fd)
        raise
    if keep:
        _pinned.append(fd)
    else:
        os.close(fd)
