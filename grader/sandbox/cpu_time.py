"""The CPU time a worker has used, read from the trusted side (never the worker's word).

Sources, best first: a cgroup v2's ``cpu.stat`` or a v1 ``cpuacct.usage`` (every process
that was ever in it, the ones that detached and ended included); else the processes listed
in its cgroup (v1 without cpuacct); else
the process tree under the worker's pid (``/proc/<pid>/task/*/children``), each process's
``utime + stime`` plus what its reaped children used (``cutime + cstime``). pids are the
host's: the grader sees bubblewrap's PID namespace from outside. A process that hides its
time (a child that ends unreaped by a process outside the tree) only makes a call look idle:
the wall-clock backstop still stops it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
TREE_CAP = 512  # processes walked in a tree (the cgroup's pids cap is lower anyway)


def process_seconds(pid: int) -> float:
    """utime + stime + cutime + cstime of one process; 0 when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return 0.0
    return stat_seconds(data)


def stat_seconds(data: bytes) -> float:
    """utime + stime + cutime + cstime from the text of /proc/<pid>/stat. Its comm (field 2)
    is the process's own choice of name, brackets and spaces included: the fields are read
    after its last ')'."""
    fields = data[data.rfind(b")") + 2 :].split()
    try:
        return sum(int(v) for v in fields[11:15]) / _TICK
    except (ValueError, IndexError):
        return 0.0


def tree_pids(root: int) -> list[int]:
    """``root`` and every process under it (as /proc lists children, thread by thread)."""
    found: list[int] = []
    todo = [root]
    while todo and len(found) < TREE_CAP:
        pid = todo.pop()
        found.append(pid)
        try:
            threads = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in threads:
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
            except (OSError, ValueError):
                pass
    return found


def pids_seconds(pids: Iterable[int]) -> float:
    return sum(process_seconds(pid) for pid in pids)


# The files that keep a cgroup's CPU time: v2's cpu.stat (usage_usec), v1 cpuacct's usage (ns).
ACCOUNTS = (("v2", "cpu.stat"), ("v1", "cpuacct.usage"))


def account_seconds(fd: int, kind: str) -> float | None:
    """The CPU time in an ACCOUNTS file open at ``fd``, read afresh (from its start)."""
    try:
        data = os.pread(fd, 4096, 0)
        if kind == "v1":
            return int(data.strip()) / 1e9
        for line in data.splitlines():
            name, _, value = line.partition(b" ")
            if name == b"usage_usec":
                return int(value) / 1e6
    except (OSError, ValueError):
        pass
    return None


def cgroup_v2_seconds(folder: str) -> float | None:
    """``usage_usec`` of a cgroup v2's cpu.stat; None where there is none (v1)."""
    try:
        with open(os.path.join(folder, "cpu.stat")) as f:
            for line in f:
                name, _, value = line.partition(" ")
                if name == "usage_usec":
                    return int(value) / 1e6
    except (OSError, ValueError):
        pass
    return None


def cpuacct_seconds(folder: str) -> float | None:
    """A cgroup v1 cpuacct hierarchy's ``cpuacct.usage`` (ns); None where it has none."""
    try:
        with open(os.path.join(folder, "cpuacct.usage")) as f:
            return int(f.read().strip()) / 1e9
    except (OSError, ValueError):
        return None


def available() -> bool:
    return os.path.exists("/proc/self/stat")
