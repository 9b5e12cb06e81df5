"""One live worker process seen from the grader: its channel, its captured output, how it
ended. ``FreshWorker`` starts a new sandboxed Python for one submission; warm.py forks
workers from a warm process instead. Both look the same to the Sandbox."""

from __future__ import annotations

import functools
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable

from grader.records.limits import Limits
from grader.sandbox import cpu_time
from grader.sandbox.cgroup import Cgroup
from grader.sandbox.inside import keyring, protocol, scratch, wire
from grader.sandbox.inside.limits import apply as apply_limits
from grader.sandbox.inside.limits import rlimits
from grader.sandbox.tiers import SandboxUnavailable, Tier
from grader.sandbox.tiers import tier as tier_named
from grader.student_text import output as visible_output

SUBMISSION_NAME = "submission.py"  # the worker's private copy (no student-chosen name)


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


class WorkerProcess:
    """A worker's channel and captured stdout/stderr. Subclasses start it and end it."""

    inner_path: str  # where the worker writes its private copy of the submission

    def __init__(self, limits: Limits, sock: socket.socket):
        self.limits = limits
        self.sock = sock
        self.out = tempfile.TemporaryFile()
        self.err = tempfile.TemporaryFile()
        self.read_at = [0, 0]
        self.ready = False

    def await_ready(self, seconds: float) -> None:
        """The worker says hello before it touches the submission; without it, the sandbox
        itself is broken and no grade can be given."""
        try:
            header, _ = wire.recv(self.sock, time.monotonic() + seconds)
        except wire.WireError as exc:
            header = {"error": str(exc)}
        if header.get("op") != protocol.READY:
            _, err = self.take_output()
            self.kill()
            raise SandboxUnavailable(
                f"the sandbox worker did not start: {header.get('error', 'no hello')}. "
                f"Its stderr: {err.strip() or 'empty'}"
            )
        self.ready = True

    def take_output(self, until: tuple[int, int] | None = None) -> tuple[str, str]:
        """What the worker printed since the last call (up to ``until``, where the worker
        said this call's output ends): all of it up to the cap, else the head and the tail
        (a script's answer is its last line)."""
        texts = []
        for i, f in enumerate((self.out, self.err)):
            start = self.read_at[i]
            if until is not None and until[i] <= start:
                texts.append("")  # (the usual answer: nothing printed since the last)
                continue
            size = os.fstat(f.fileno()).st_size
            if until is not None:
                size = max(start, min(size, until[i]))
            cap = self.limits.output_chars
            if size - start <= cap:
                data = os.pread(f.fileno(), size - start, start) if size > start else b""
                text = data.decode("utf-8", "replace")
            else:
                tail = min(1000, cap // 4)
                room = max(cap - tail - 64, 0)  # leaves room for the mark within the cap
                head = os.pread(f.fileno(), room, start).decode("utf-8", "replace")
                end = os.pread(f.fileno(), tail, size - tail).decode("utf-8", "replace")
                text = f"{head}\n[... {size - start - room - tail} bytes not shown ...]\n{end}"
            self.read_at[i] = size
            texts.append(text)
        if not texts[0] and not texts[1]:
            return "", ""
        cap = self.limits.output_chars  # now in bytes of text with its control characters shown
        return visible_output(texts[0], cap), visible_output(texts[1], cap)

    def exit_description(self) -> str:
        code = self.exit_status(0.5)
        if code is None:
            return "closed its result channel"
        if code < 0:
            name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else -code
            return {
                "SIGKILL": "was killed (SIGKILL: usually the memory limit or a time limit)",
                "SIGSEGV": "crashed (segmentation fault)",
                "SIGXCPU": "used up its CPU-time limit",
            }.get(str(name), f"died from signal {name}")
        return f"exited with status {code}"

    def exit_status(self, wait: float) -> int | None:
        """The worker's exit status (negative: killed by that signal); None if it still runs."""
        raise NotImplementedError

    def cpu_seconds(self) -> float | None:
        """CPU time the worker and all it started have used so far, read from this side
        (cpu_time.py); None where this machine cannot tell."""
        return None

    def kill(self) -> None:
        """End the worker and everything it started; release what it held."""
        raise NotImplementedError

    def _close_channel(self) -> None:
        self.sock.close()
        self.out.close()
        self.err.close()


# Makes a worker for (limits, tier): FreshWorker, or one forked from a warm server (warm.py).
Spawner = Callable[[Limits, str], WorkerProcess]


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
