"""A cgroup per sandbox, where this machine lets the grader make one.

It caps how many processes a submission may run (a fork bomb stops at the cap, even for
root, whom RLIMIT_NPROC does not bind) and how much memory they use together, and at the
end it kills every process inside, however it detached itself (setsid, double fork).
Works with cgroup v1 (pids and memory hierarchies) and v2 (a delegated subtree); where
neither is writable, ``create`` returns None and the sandbox relies on the other layers.
"""

from __future__ import annotations

import os
import secrets
import signal
import time
from collections.abc import Iterator

from grader.sandbox import cpu_time

ROOT = "/sys/fs/cgroup"


def _own_paths() -> dict[str, str]:
    """controller -> this process's cgroup path ("" for v2's unified hierarchy)."""
    paths = {}
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                for controller in controllers.split(",") if controllers else [""]:
                    paths[controller] = path
    except (OSError, ValueError):
        pass
    return paths


def _write(path: str, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


class Cgroup:
    def __init__(self, dirs: list[str]):
        self.dirs = dirs  # one per hierarchy (v1: pids and memory; v2: one)
        # the file that keeps its CPU time, open: found on the first reading, then read in
        # place (once per answer: neither the misses nor an open are paid again)
        self._cpu_fd: int | None = None
        self._cpu_kind = ""

    @classmethod
    def create(cls, max_processes: int, memory_bytes: int) -> Cgroup | None:
        name = f"grader-{os.getpid()}-{secrets.token_hex(4)}"
        own = _own_paths()
        made: list[str] = []
        try:
            if os.path.exists(os.path.join(ROOT, "cgroup.controllers")):  # v2
                path = os.path.join(ROOT, own.get("", "/").lstrip("/"), name)
                _remove_stale(os.path.dirname(path))
                os.mkdir(path)
                made.append(path)
                _write(os.path.join(path, "pids.max"), str(max_processes))
                _write(os.path.join(path, "memory.max"), str(memory_bytes))
            else:  # v1: the pids hierarchy is required, memory is a bonus
                path = os.path.join(ROOT, "pids", own.get("pids", "/").lstrip("/"), name)
                _remove_stale(os.path.dirname(path))
                os.mkdir(path)
                made.append(path)
                _write(os.path.join(path, "pids.max"), str(max_processes))
                memory = os.path.join(ROOT, "memory", own.get("memory", "/").lstrip("/"), name)
                _remove_stale(os.path.dirname(memory))
                try:
                    os.mkdir(memory)
                    made.append(memory)
                    _write(os.path.join(memory, "memory.limit_in_bytes"), str(memory_bytes))
                except OSError:
                    pass
                # cpuacct keeps the CPU time of processes that ended, reaped or not, which a
                # list of the live ones misses (a submission could hide its computing there).
                cpuacct = os.path.join(ROOT, "cpuacct", own.get("cpuacct", "/").lstrip("/"), name)
                _remove_stale(os.path.dirname(cpuacct))
                try:
                    os.mkdir(cpuacct)
                    made.append(cpuacct)
                except OSError:
                    pass
        except OSError:
            Cgroup(made).remove()
            return None
        return cls(made)

    def enter(self) -> None:
        """Move the calling process in (runs in the child between fork and exec)."""
        for path in self.dirs:
            _write(os.path.join(path, "cgroup.procs"), str(os.getpid()))

    def pids(self) -> set[int]:
        found: set[int] = set()
        for path in self.dirs:
            try:
                with open(os.path.join(path, "cgroup.procs")) as f:
                    found.update(int(line) for line in f if line.strip())
            except OSError:
                pass
        return found

    def memory_bytes(self) -> int | None:
        """Memory charged to the cgroup now (tmpfs pages its processes wrote included);
        None where there is no memory controller."""
        for path in self.dirs:
            for name in ("memory.current", "memory.usage_in_bytes"):
                try:
                    with open(os.path.join(path, name)) as f:
                        return int(f.read())
                except (OSError, ValueError):
                    continue
        return None

    def cpu_seconds(self, leave_out: frozenset[int] | set[int] = frozenset()) -> float:
        """CPU time its processes used: v2's (or v1 cpuacct's) account of all it ever held,
        else (v1 without cpuacct) the sum over the processes in it now but ``leave_out``
        (cpu_time.py)."""
        if self._cpu_fd is not None:
            seconds = cpu_time.account_seconds(self._cpu_fd, self._cpu_kind)
            if seconds is not None:
                return seconds
            self._close_cpu_file()
        for path in self.dirs:
            for kind, name in cpu_time.ACCOUNTS:
                try:
                    fd = os.open(os.path.join(path, name), os.O_RDONLY | os.O_CLOEXEC)
                except OSError:
                    continue
                seconds = cpu_time.account_seconds(fd, kind)
                if seconds is None:
                    os.close(fd)
                    continue
                self._cpu_fd, self._cpu_kind = fd, kind
                return seconds
        return cpu_time.pids_seconds(self.pids() - leave_out)

    def keeps_cpu_time(self) -> bool:
        """Whether it accounts for the CPU time of every process it ever held (v2's
        cpu.stat, v1's cpuacct), the ones that ended unreaped included."""
        return any(
            cpu_time.cgroup_v2_seconds(path) is not None or cpu_time.cpuacct_seconds(path) is not None
            for path in self.dirs
        )

    def kill_all(self) -> None:
        """SIGKILL everything inside until nothing is left (the pids cap bounds the race),
        looking again soon at first: the killed are usually gone within a millisecond, and
        a grade waits for this before its report."""
        for pause in _pauses(1.0):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(pause)

    def _close_cpu_file(self) -> None:
        if self._cpu_fd is not None:
            try:
                os.close(self._cpu_fd)
            except OSError:
                pass
            self._cpu_fd = None

    def remove(self) -> None:
        self._close_cpu_file()
        for path in self.dirs:
            for pause in _pauses(1.0):  # rmdir waits for the killed processes to be reaped
                try:
                    os.rmdir(path)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(pause)


def _pauses(seconds: float) -> Iterator[float]:
    """Waits between looks, 0.5 ms doubling up to 10 ms, about ``seconds`` in all."""
    pause, spent = 0.0005, 0.0
    while spent < seconds:
        yield pause
        spent += pause
        pause = min(pause * 2, 0.01)


_tidied: set[str] = set()


def _remove_stale(parent: str) -> None:
    """Remove the empty cgroups of grader processes that were killed before they could
    (kill -9 of a batch); once per folder and process. A cgroup in use is never empty."""
    if parent in _tidied:
        return
    _tidied.add(parent)
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        owner = name.split("-")[1] if name.startswith("grader-") and name.count("-") == 2 else ""
        if owner.isdigit() and not os.path.exists(f"/proc/{owner}"):
            try:
                os.rmdir(os.path.join(parent, name))  # fails, harmlessly, unless it is empty
            except OSError:
                pass


def available() -> bool:
    """Whether this process may create a sandbox cgroup here (made and removed at once)."""
    group = Cgroup.create(8, 64 << 20)
    if group is None:
        return False
    group.remove()
    return True
