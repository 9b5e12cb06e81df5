"""One named-group entry in a file's POSIX access ACL, written as the kernel stores it (the
``system.posix_acl_access`` extended attribute), so no ``acl`` package is needed.

A process in a group that an ACL names gets that entry's rights (within the mask), never
the "other" rights: an entry ``group:GID:--x`` on a world-writable folder keeps every
process of that group from creating anything there, whatever the folder's mode says.
"""

from __future__ import annotations

import errno
import os
import stat
import struct

ATTRIBUTE = "system.posix_acl_access"
VERSION = 2
USER_OBJ, USER, GROUP_OBJ, GROUP, MASK, OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
UNDEFINED = 0xFFFFFFFF
_HEADER, _ENTRY = struct.Struct("<I"), struct.Struct("<HHI")

Entry = tuple[int, int, int]  # (tag, rights rwx as 0-7, id)


def decode(data: bytes) -> list[Entry]:
    if (
        len(data) < _HEADER.size
        or (len(data) - _HEADER.size) % _ENTRY.size
        or _HEADER.unpack_from(data)[0] != VERSION
    ):
        raise ValueError("not a POSIX ACL")
    return [_ENTRY.unpack_from(data, offset) for offset in range(_HEADER.size, len(data), _ENTRY.size)]


def encode(entries: list[Entry]) -> bytes:
    # The kernel wants them by tag (the order of the constants above), then by id.
    ordered = sorted(entries, key=lambda e: (e[0], e[2]))
    return _HEADER.pack(VERSION) + b"".join(_ENTRY.pack(*e) for e in ordered)


def from_mode(mode: int) -> list[Entry]:
    """The ACL a file without one has: its mode's three classes."""
    return [
        (USER_OBJ, (mode >> 6) & 7, UNDEFINED),
        (GROUP_OBJ, (mode >> 3) & 7, UNDEFINED),
        (OTHER, mode & 7, UNDEFINED),
    ]


def with_group(entries: list[Entry], gid: int, rights: int) -> list[Entry]:
    """``entries`` with the entry of group ``gid`` set to ``rights``; a mask is added where
    there was none, equal to the owning group's rights (so the mode does not change)."""
    kept = [e for e in entries if not (e[0] == GROUP and e[2] == gid)]
    if not any(e[0] == MASK for e in kept):
        owning = next((e[1] for e in kept if e[0] == GROUP_OBJ), 0)
        kept.append((MASK, owning, UNDEFINED))
    return kept + [(GROUP, rights, gid)]


def group_rights(path: str, gid: int) -> int | None:
    """The rights the ACL of ``path`` gives group ``gid`` by name; None without such an entry."""
    try:
        entries = decode(os.getxattr(path, ATTRIBUTE, follow_symlinks=False))
    except (OSError, ValueError):
        return None
    return next((e[1] for e in entries if e[0] == GROUP and e[2] == gid), None)


def set_group(path: str, gid: int, rights: int) -> None:
    """Give group ``gid`` exactly ``rights`` on ``path`` (a folder or a regular file, never
    followed if a link), keeping every other entry. Raises OSError where the filesystem has
    no ACLs (EOPNOTSUPP) or the file cannot be changed."""
    mode = os.lstat(path).st_mode
    if stat.S_ISLNK(mode):
        raise OSError(errno.ELOOP, f"{path} is a link")
    try:
        entries = decode(os.getxattr(path, ATTRIBUTE, follow_symlinks=False))
    except OSError as exc:
        if exc.errno != errno.ENODATA:
            raise
        entries = from_mode(mode)
    except ValueError:
        raise OSError(errno.EINVAL, f"{path} holds an ACL this grader cannot read") from None
    if (GROUP, rights, gid) in entries:
        return  # (already so: the folder's ctime is left alone)
    os.setxattr(path, ATTRIBUTE, encode(with_group(entries, gid, rights)), follow_symlinks=False)
