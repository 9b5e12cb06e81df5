"""A fresh worker: ``FreshWorker`` starts a new sandboxed Python for one submission (its
channel a descriptor passed to it, its rlimits, cgroup and keyring set between fork and
exec); in a tier whose worker is a plain subprocess (unsandboxed) ``fresh_worker`` starts a
PlainWorker instead (plain_worker.py). warm.py forks workers from a warm process. All look
the same to the Sandbox (worker_process.py)."""

from __future__ import annotations

import functools
import os
import signal
import socket
import subprocess
import tempfile

from grader.records.limits import Limits
from grader.sandbox import cpu_time
from grader.sandbox.cgroup import Cgroup
from grader.sandbox.inside import keyring, scratch
from grader.sandbox.inside.limits import apply as apply_limits
from grader.sandbox.inside.limits import rlimits
from grader.sandbox.plain_worker import PlainWorker
from grader.sandbox.tiers import Tier
from grader.sandbox.tiers import tier as tier_named
from grader.sandbox.worker_process import SUBMISSION_NAME, Spawner, WorkerProcess

__all__ = [
    "FreshWorker",
    "SUBMISSION_NAME",
    "Spawner",
    "WorkerProcess",
    "enter_child",
    "fresh_worker",
    "rlimits_of",
]


def fresh_worker(limits: Limits, tier: str) -> WorkerProcess:
    """A new worker for one submission in tier ``tier``, starting now."""
    if tier_named(tier).plain_process:
        return PlainWorker(limits, tier)
    return FreshWorker(limits, tier)


def rlimits_of(limits: Limits, cpu: bool = True) -> list[tuple[int, int, int]]:
    """The rlimit triples that carry ``limits`` out (inside/limits.py takes plain values)."""
    return rlimits(
        memory_mib=limits.memory_mib,
        file_mib=limits.file_mib,
        open_files=limits.open_files,
        processes=limits.processes,
        submission_seconds=limits.submission_seconds,
        cpu=cpu,
    )


class FreshWorker(WorkerProcess):
    """A new sandboxed Python that imports numpy, then the one submission."""

    def __init__(self, limits: Limits, tier: str):
        parent, child = socket.socketpair()
        super().__init__(limits, parent)
        self.tier = tier_named(tier)
        self.tmp = tempfile.mkdtemp(prefix="grader-tmp-")
        fd = child.fileno()
        # Cgroup first: its pids cap holds for root too, and it finds detached processes;
        # without one (or one that loses the CPU time of ended processes) the worker may
        # start none where it has no PID namespace (the tier's confinement).
        self.cgroup = Cgroup.create(limits.processes, limits.memory_mib << 20)
        try:
            start = self.tier.worker(
                fd, limits, self.tmp, in_cgroup=self.cgroup is not None and self.cgroup.keeps_cpu_time()
            )
        except BaseException:
            self._release()
            raise
        self.inner_path = os.path.join(start.folder, SUBMISSION_NAME)
        self.ended = False
        self.proc = subprocess.Popen(
            start.command,
            stdin=subprocess.DEVNULL,
            stdout=self.out,
            stderr=self.err,
            pass_fds=(fd,),
            env=start.env,
            cwd=start.cwd,
            start_new_session=True,
            preexec_fn=functools.partial(enter_child, rlimits_of(limits), self.cgroup, self.tier),
        )
        child.close()
        self.tier.started(self.proc.pid, self.tmp)

    def exit_status(self, wait: float) -> int | None:
        try:
            code = self.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            return None
        return self.tier.exit_status(code)

    def cpu_seconds(self) -> float | None:
        if self.cgroup is not None:
            return self.cgroup.cpu_seconds()
        if not cpu_time.available():
            return None
        return self.tier.cpu_seconds(self.proc.pid)

    def kill(self) -> None:
        if self.ended:
            return  # (once: its pid, and so its user, may be another worker's by now)
        self.ended = True
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self.cgroup is not None:
            self.cgroup.kill_all()  # also what left the process group (setsid, double fork)
        # Before it is reaped: until then its pid, and so a tier's user for it, is no one else's.
        self.tier.ended(self.proc.pid, self.tmp)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self._close_channel()
        self._release()

    def _release(self) -> None:
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None
        scratch.remove(self.tmp)  # folders the worker made unlistable included


def enter_child(limits: list[tuple[int, int, int]], cgroup: Cgroup | None, tier: Tier) -> None:
    """Runs in the child between fork and exec: what it sets applies to all it starts,
    a new empty session keyring included (none of the grader's keys is in reach); then
    what its tier does there (a user of its own, death with the grader)."""
    if cgroup is not None:
        cgroup.enter()
    keyring.join_new_session()
    apply_limits(limits)
    tier.enter()
