"""Warm workers for a batch: a fork server per slot instead of a new Python per submission.

A new sandboxed Python that imports numpy costs about 0.1 s of CPU, as much as grading a
submission. A ``ForkServer`` (forkserver.py, in the same sandbox tier) pays it once; each
submission then gets a forked worker that sheds the server's state, enters namespaces of
its own, forbids itself new sockets and the kernel's keyrings and applies its own Landlock
domain before any student code runs. Its folder lies on a size-capped tmpfs of the server's
(bwrap's /tmp, or one the server mounted in namespaces of its own before restricting itself).
Between submissions the slot's cgroup is swept: every process but the server (and bwrap's
own) is killed, however it detached; then the server must hold no more memory and scratch
space than after start-up, else it is renewed.

Used only where all of that holds: the bubblewrap or landlock tier, Landlock ABI >= 6 (so a
worker can neither signal nor trace the server or earlier workers), a cgroup the grader may
create, and unprivileged user namespaces (each worker's own IPC and network namespaces).
Elsewhere every submission gets a fresh worker, as ``grader check`` always does.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import os
import select
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence

from grader.records.limits import Limits
from grader.sandbox.cgroup import Cgroup
from grader.sandbox.inside import protocol, scratch
from grader.sandbox.process import enter_child, rlimits_of
from grader.sandbox.tiers import SandboxUnavailable
from grader.sandbox.tiers import tier as tier_named
from grader.sandbox.tiers.base import syscall_filter_works
from grader.sandbox.worker_process import SUBMISSION_NAME, WorkerProcess

STARTUP_SECONDS = 60
FRAMEWORK_STARTUP_SECONDS = 60  # more for each framework the server preloads
REPLY_SECONDS = 30  # the server answers at once; this only bounds a wedged one
FORKS_PER_SERVER = 250  # a fresh server now and then: nothing accumulates for long
# What a submission may leave behind before its server is renewed: its folder is removed,
# so a scratch space that stays fuller, or a cgroup that holds more memory than after
# start-up (tmpfs pages are charged to it), means a submission kept something.
SCRATCH_SLACK_BYTES, SCRATCH_SLACK_INODES = 1 << 20, 64
MEMORY_SLACK_BYTES = 64 << 20


@functools.cache
def supported(tier: str) -> bool:
    """Whether warm workers can be used in ``tier`` here (each tier says: Tier.warm_works)."""
    return tier_named(tier).warm_works()


class ServerBroken(Exception):
    """The fork server stopped answering or died; the slot starts a new one."""


class ForkServer:
    """One warm server in its own cgroup; forks one worker at a time."""

    def __init__(self, limits: Limits, tier: str):
        self.limits, self.tier = limits, tier
        self.forks = 0
        cgroup = Cgroup.create(limits.processes, limits.memory_mib << 20)
        if cgroup is None:
            raise SandboxUnavailable("no cgroup could be made for a warm worker")
        self.cgroup: Cgroup = cgroup
        self.control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.log = tempfile.TemporaryFile()
        filters = syscall_filter_works()
        # The tier completes the config: where the workers' folders are, how the server and
        # its workers confine themselves.
        start = tier_named(tier).fork_server(
            theirs.fileno(),
            limits,
            {
                "rlimits": rlimits_of(limits),
                "deny_sockets": filters,
                "deny_keys": filters,
                "preload": list(limits.preload),
            },
        )
        self.host_scratch = start.host_folder
        self.proc: subprocess.Popen | None = subprocess.Popen(
            start.command,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=self.log,
            pass_fds=(theirs.fileno(),),
            env=start.env,
            cwd=start.cwd,
            start_new_session=True,
            # The server itself has no CPU-time limit: each worker sets its own.
            preexec_fn=functools.partial(
                enter_child, rlimits_of(limits, cpu=False), self.cgroup, tier_named(tier)
            ),
        )
        theirs.close()
        try:
            hello = self._receive(STARTUP_SECONDS + FRAMEWORK_STARTUP_SECONDS * len(limits.preload))
        except ServerBroken as exc:
            hello = {"error": str(exc)}
        if hello.get("op") != protocol.READY:
            printed = os.pread(self.log.fileno(), 2000, max(0, os.fstat(self.log.fileno()).st_size - 2000))
            self.close()
            raise SandboxUnavailable(
                f"the warm worker did not start: {hello.get('error', 'no hello')}. "
                f"It printed: {printed.decode('utf-8', 'replace').strip() or 'nothing'}"
            )
        # Taken before any student code ran here: bwrap's processes and the server itself,
        # and how much memory and scratch space they hold.
        self.keep = self.cgroup.pids()
        try:
            self.baseline = self._usage()
        except ServerBroken as exc:
            self.close()
            raise SandboxUnavailable(f"the warm worker did not start: {exc}") from None

    # -- the control channel
    def exchange(self, message: protocol.ForkServerRequest, fds: Sequence[int] = ()) -> dict:
        try:
            socket.send_fds(self.control, [json.dumps(message).encode()], list(fds))
        except OSError as exc:
            raise ServerBroken(f"the fork server is gone ({exc})") from None
        reply = self._receive(REPLY_SECONDS)
        if "error" in reply:
            raise ServerBroken(f"the fork server refused: {reply['error']}")
        return reply

    def _receive(self, seconds: float) -> dict:
        ready, _, _ = select.select([self.control], [], [], seconds)
        try:
            data = self.control.recv(4096) if ready else None
        except OSError:
            data = b""
        if data is None:
            raise ServerBroken("the fork server did not answer")
        if not data:
            raise ServerBroken("the fork server is gone")
        try:
            reply = json.loads(data)
        except ValueError:
            raise ServerBroken("the fork server's answer was not JSON") from None
        if not isinstance(reply, dict):
            raise ServerBroken("the fork server's answer was not an object")
        return reply

    # -- workers
    def spawn(self, limits: Limits, tier: str) -> ForkedWorker:
        if (limits, tier) != (self.limits, self.tier):
            raise ValueError("a fork server serves only the limits and tier it was made for")
        self.forks += 1
        return ForkedWorker(self)

    def sweep(self) -> None:
        """Kill every process in the cgroup but the server's own (the pids cap bounds the
        race with a fork bomb). A server that cannot be swept clean is closed."""
        for _ in range(200):
            extra = self.cgroup.pids() - self.keep
            if not extra:
                return
            for pid in extra:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.005)
        self.close()
        raise ServerBroken("processes left by a submission could not be killed")

    def _usage(self) -> tuple[int | None, int, int]:
        """(memory bytes of the cgroup, scratch bytes, scratch inodes) in use now."""
        reply = self.exchange({"op": protocol.USAGE})
        size, inodes = reply.get("bytes"), reply.get("inodes")
        if not (type(size) is int and size >= 0 and type(inodes) is int and inodes >= 0):
            raise ServerBroken("the fork server's usage answer was malformed")
        return self.cgroup.memory_bytes(), size, inodes

    def check_clean(self) -> None:
        """After a sweep: the next student must start where the first did. A server whose
        scratch space or memory did not come back to what it held after start-up is closed
        (the slot starts a new one)."""
        memory, used, inodes = self._usage()
        base_memory, base_used, base_inodes = self.baseline
        if (
            used > base_used + SCRATCH_SLACK_BYTES
            or inodes > base_inodes + SCRATCH_SLACK_INODES
            or (memory is not None and base_memory is not None and memory > base_memory + MEMORY_SLACK_BYTES)
        ):
            self.close()
            raise ServerBroken("a submission left memory or files behind")

    def usable(self) -> bool:
        return self.proc is not None and self.proc.poll() is None and self.forks < FORKS_PER_SERVER

    def close(self) -> None:
        if self.proc is None:
            return
        self.cgroup.kill_all()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        self.cgroup.remove()
        self.control.close()
        self.log.close()
        if self.host_scratch:
            scratch.remove(self.host_scratch)  # empty: the server's tmpfs was over it
        self.proc = None


class ForkedWorker(WorkerProcess):
    """A worker forked by a ForkServer; it is sent the submission's text at load time."""

    def __init__(self, server: ForkServer):
        sock, theirs = socket.socketpair()
        super().__init__(server.limits, sock)
        self.server = server
        try:
            reply = server.exchange(
                {"op": protocol.FORK}, [theirs.fileno(), self.out.fileno(), self.err.fileno()]
            )
        except ServerBroken as exc:
            self._close_channel()
            raise SandboxUnavailable(str(exc)) from None
        finally:
            theirs.close()
        self.pid = int(reply["pid"])
        self.inner_path = os.path.join(str(reply["scratch"]), SUBMISSION_NAME)

    def exit_status(self, wait: float) -> int | None:
        try:
            status = self.server.exchange({"op": protocol.STATUS, "pid": self.pid, "wait": wait})["status"]
        except ServerBroken:
            return None
        return status if type(status) is int else None

    def cpu_seconds(self) -> float | None:
        # The slot's cgroup holds the server and this worker only (one submission at a time);
        # the pid the server gives is in its PID namespace, so the cgroup's list is read.
        return self.server.cgroup.cpu_seconds(self.server.keep)

    def kill(self) -> None:
        self._close_channel()
        try:
            self.server.exchange({"op": protocol.END, "pid": self.pid})
            self.server.sweep()
            self.server.check_clean()
        except ServerBroken:
            self.server.close()  # the slot starts a new server for the next submission


# --------------------------------------------------------------------------- servers per slot


class Slot:
    """What one grading at a time uses: a server, replaced when it wore out or broke (a
    submission that broke it gets the crash of its own worker, never a grader error)."""

    def __init__(self, limits: Limits, tier: str):
        self.limits, self.tier = limits, tier
        self.server: ForkServer | None = None

    def spawn(self, limits: Limits, tier: str) -> ForkedWorker:
        try:
            return self._server().spawn(limits, tier)
        except SandboxUnavailable:  # it broke since the last submission: one new one, once
            self.close()
            return self._server().spawn(limits, tier)

    def _server(self) -> ForkServer:
        if self.server is None or not self.server.usable():
            self.close()
            self.server = ForkServer(self.limits, self.tier)
        return self.server

    def close(self) -> None:
        if self.server is not None:
            self.server.close()
            self.server = None


_idle: list[Slot] = []
_lock = threading.Lock()


@contextlib.contextmanager
def lease(limits: Limits, tier: str) -> Iterator[Callable[[Limits, str], ForkedWorker]]:
    """A slot for one submission at a time (a sweep would kill a neighbour's worker);
    yields its ``spawn``. Slots are kept for the next submission of this process."""
    with _lock:
        slot = next((s for s in _idle if (s.limits, s.tier) == (limits, tier)), None)
        if slot is not None:
            _idle.remove(slot)
    slot = slot or Slot(limits, tier)
    try:
        yield slot.spawn
    finally:
        with _lock:
            _idle.append(slot)


def close_all() -> None:
    with _lock:
        slots, _idle[:] = list(_idle), []
    for slot in slots:
        slot.close()


atexit.register(close_all)
