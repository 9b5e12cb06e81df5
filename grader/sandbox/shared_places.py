"""The places of this machine that every user may write, closed to the unprivileged tier's
workers.

A worker of that tier runs as a user of its own, with no namespace of its own: whatever
every user may write (``/tmp``, ``/var/tmp``, ``/dev/shm``, ``/run/lock``, a folder someone
made 0777) it could write too, and leave there for the next student's worker (or, during a
batch, share with a classmate's). So once per grader process the machine is walked for
such places (folders that other users may search and write, regular files they may write
inside those), on every filesystem that is mounted read-write and is not one of the
kernel's own (/proc, /sys, cgroups: nothing there is storage a user may write), without
following links and without descending where other users may not search. Each place found is closed to one
group that every worker of the tier holds and no other process does: an ACL entry
``group:GID:--x`` on a folder (it may still be passed through, not listed or written),
``group:GID:r--`` (or ``---``) on a file. The entries stay: they concern no other process,
and a grader run at the same time relies on them too.

Where a filesystem has no ACLs (``/dev/mqueue``, say), a folder cannot be closed: it is
*swept* instead, everything a worker's user owns in it removed after the worker ends (so
the next worker never sees it, though two running at the same time could). A file there
that every user may write can be neither: that is *open*, and the tier says it cannot keep
workers apart (a message queue's file is not: no write reaches its messages).

Files every user may write are looked for only inside such folders: one elsewhere (none on
a normal system) would need every file of the machine looked at, several times the walk.
"""

from __future__ import annotations

import errno
import functools
import os
import re
import stat
from dataclasses import dataclass

from grader.sandbox import posix_acl
from grader.sandbox.inside import scratch

# The kernel's own filesystems: what a user may write there is no storage another user's
# process could read back later (a process's own /proc entries die with it).
PSEUDO = frozenset(
    {
        "proc",
        "sysfs",
        "cgroup",
        "cgroup2",
        "devpts",
        "securityfs",
        "debugfs",
        "tracefs",
        "bpf",
        "pstore",
        "configfs",
        "fusectl",
        "binfmt_misc",
        "autofs",
        "efivarfs",
        "selinuxfs",
        "nsfs",
        "rpc_pipefs",
        "nfsd",
    }
)
# Filesystems whose folders' link count is 2 + their number of subfolders: a folder with a
# count of 2 holds no folder, and need not be listed to know it (others, btrfs or overlay
# say 1: every folder there is listed).
COUNTS_SUBFOLDERS = frozenset({"ext2", "ext3", "ext4", "xfs", "tmpfs", "devtmpfs", "ramfs"})
# Filesystems whose files no write reaches: a POSIX message queue's messages come and go
# only through the mq_* calls, which workers may not make (syscalls.py).
UNWRITABLE_FILES = frozenset({"mqueue"})
FOLDER_RIGHTS = 0o1  # --x: a closed folder may still be passed through
_ESCAPE = re.compile(r"\\([0-7]{3})")


@dataclass(frozen=True)
class Mount:
    point: str
    fstype: str
    read_only: bool


@dataclass(frozen=True)
class Found:
    """World-writable folders and regular files, each reachable by every user."""

    folders: tuple[str, ...]
    files: tuple[str, ...]


@dataclass(frozen=True)
class Closure:
    """What became of the places found: ``closed`` by an ACL entry, ``swept`` (folders
    that take none: a worker's leftovers are removed after it), ``open`` (files that take
    none: nothing keeps workers from sharing them)."""

    closed: tuple[str, ...]
    swept: tuple[str, ...]
    open: tuple[str, ...]


def mounts(text: str | None = None) -> list[Mount]:
    """This process's mounts (``/proc/self/mountinfo``, or ``text`` in its format), each
    mount point once (the last mounted there is the one in sight)."""
    if text is None:
        with open("/proc/self/mountinfo") as f:
            text = f.read()
    found: dict[str, Mount] = {}
    for line in text.splitlines():
        before, _, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if len(fields) < 6 or not tail:
            continue
        point = _ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), fields[4])
        options = set(fields[5].split(","))
        found.pop(point, None)
        found[point] = Mount(point, tail[0], "ro" in options)
    return list(found.values())


def _reachable(path: str) -> bool:
    """Whether every folder above ``path`` may be searched by every user."""
    while True:
        parent = os.path.dirname(path)
        if parent == path:
            return True
        try:
            if not os.stat(parent).st_mode & stat.S_IXOTH:
                return False
        except OSError:
            return False
        path = parent


def find(mount_list: list[Mount] | None = None) -> Found:
    """Every folder that every user may search and write on the writable filesystems of
    ``mount_list`` (default: this machine's) that are not the kernel's own, and every
    regular file that every user may write inside such a folder."""
    mount_list = mounts() if mount_list is None else mount_list
    points = {m.point for m in mount_list}
    folders: list[str] = []
    for mount in mount_list:
        if mount.read_only or mount.fstype in PSEUDO or not _reachable(mount.point):
            continue
        try:
            mode = os.stat(mount.point).st_mode
        except OSError:
            continue
        if not stat.S_ISDIR(mode) or not mode & stat.S_IXOTH:
            continue
        if mode & stat.S_IWOTH:
            folders.append(mount.point)
        pending = [mount.point]
        counts = mount.fstype in COUNTS_SUBFOLDERS
        while pending:
            _walk_one(pending.pop(), points, counts, pending, folders)
    files: list[str] = []
    kinds = {m.point: m.fstype for m in mount_list}
    for folder in folders:
        if kinds.get(folder) not in UNWRITABLE_FILES:
            _files_in(folder, points, files)
    return Found(tuple(folders), tuple(sorted(set(files))))


def _walk_one(folder: str, points: set[str], counts: bool, pending: list[str], folders: list[str]) -> None:
    """The subfolders of ``folder`` that every user may search: walked next (a folder whose
    link count says it has no subfolder is not even listed), and noted if they may write."""
    try:
        entries = os.scandir(folder)
    except OSError:
        return
    with entries:
        for entry in entries:
            try:
                if not entry.is_dir(follow_symlinks=False) or entry.path in points:
                    continue  # (another mount is walked on its own)
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue  # gone while walking
            if st.st_mode & stat.S_IXOTH:
                if st.st_mode & stat.S_IWOTH:
                    folders.append(entry.path)
                if not (counts and st.st_nlink == 2):
                    pending.append(entry.path)


def _files_in(folder: str, points: set[str], files: list[str]) -> None:
    """The regular files every user may write below ``folder`` (where every user may
    search)."""
    pending = [folder]
    while pending:
        try:
            entries = os.scandir(pending.pop())
        except OSError:
            continue
        with entries:
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if (
                            entry.path not in points
                            and entry.stat(follow_symlinks=False).st_mode & stat.S_IXOTH
                        ):
                            pending.append(entry.path)
                    elif (
                        entry.is_file(follow_symlinks=False)
                        and entry.stat(follow_symlinks=False).st_mode & stat.S_IWOTH
                    ):
                        files.append(entry.path)
                except OSError:
                    continue


def close(found: Found, gid: int) -> Closure:
    """Close every place of ``found`` to group ``gid`` (see the module's comment)."""
    closed: list[str] = []
    swept: list[str] = []
    still_open: list[str] = []
    for path, rights, unclosed in [(p, FOLDER_RIGHTS, swept) for p in found.folders] + [
        (p, None, still_open) for p in found.files
    ]:
        try:
            if rights is None:  # a file: it may still be read if every user may read it
                rights = 0o4 if os.lstat(path).st_mode & stat.S_IROTH else 0
            posix_acl.set_group(path, gid, rights)
        except FileNotFoundError:
            continue
        except OSError as exc:
            if exc.errno != errno.EROFS:  # (a read-only filesystem: nobody writes there)
                unclosed.append(path)
                continue
        closed.append(path)
    return Closure(tuple(closed), tuple(swept), tuple(still_open))


@functools.cache
def closed_to(gid: int) -> Closure:
    """This machine's shared places, found and closed to ``gid`` once per grader process
    (the processes of a batch are forked after it)."""
    return close(find(), gid)


def sweep(folders: tuple[str, ...] | list[str], uid: int) -> list[str]:
    """Remove what user ``uid`` owns directly in each of ``folders`` (whatever it holds);
    returns what could not be removed."""
    left: list[str] = []
    for folder in folders:
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_uid != uid:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if not scratch.remove(entry.path):
                        left.append(entry.path)
                else:
                    os.unlink(entry.path)
            except FileNotFoundError:
                pass
            except OSError:
                left.append(entry.path)
    return left
