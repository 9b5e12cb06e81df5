"""A worker of the unsandboxed tier (a student's own machine: macOS, Windows): a plain
subprocess of this Python, started with nothing only Linux offers (no set-up between fork
and exec, no descriptor passed to it, no cgroup).

Its channel is a loopback TCP connection it opens back to the grader (inside/connect_back.py):
the grader listens on 127.0.0.1 on a port of the system's choosing, writes a one-time token
on the worker's stdin, and takes the first connection that sends that token (any other is
closed). The frames on it are those of every tier (wire.py). The per-call limit and the
submission's budget are the grader's, as everywhere: it kills the worker (its process group
on POSIX, its process tree on Windows). Its stdout and stderr are files in a folder of the
grader's, read here through handles of this side's own (Windows has no os.pread).
"""

from __future__ import annotations

import contextlib
import hmac
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import Any

from grader.records.limits import Limits
from grader.sandbox import cpu_time
from grader.sandbox.inside import protocol, scratch
from grader.sandbox.tiers import SandboxUnavailable
from grader.sandbox.tiers import tier as tier_named
from grader.sandbox.worker_process import SUBMISSION_NAME, WorkerProcess

TOKEN_SECONDS = 5.0  # for a connection to send its token once it is taken


class PlainWorker(WorkerProcess):
    """A plain subprocess that connects back; mutation checks get the arguments it sends
    back after a call (no shared memory here: launcher.py)."""

    shares_memory = False

    def __init__(self, limits: Limits, tier: str):
        self.tier = tier_named(tier)
        self.logs = tempfile.mkdtemp(prefix="grader-out-")
        self.tmp = tempfile.mkdtemp(prefix="grader-tmp-")
        paths = [os.path.join(self.logs, name) for name in ("stdout", "stderr")]
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        super().__init__(limits, listener, open(paths[0], "w+b"), open(paths[1], "w+b"))
        self.readers = (open(paths[0], "rb"), open(paths[1], "rb"))
        self.ended = False
        self.token = secrets.token_hex(protocol.TOKEN_CHARS // 2)
        try:
            listener.bind((protocol.LOOPBACK, 0))
            listener.listen(8)
            start = self.tier.worker(listener.getsockname()[1], limits, self.tmp, in_cgroup=False)
            self.inner_path = os.path.join(start.folder, SUBMISSION_NAME)
            self.proc = subprocess.Popen(
                start.command,
                stdin=subprocess.PIPE,
                stdout=self.out,
                stderr=self.err,
                env=start.env,
                cwd=start.cwd,
                **_own_process_group(),
            )
        except BaseException:
            self._close_channel()
            self._release()
            raise
        assert self.proc.stdin is not None  # (stdin=PIPE)
        with contextlib.suppress(OSError):  # (a worker that died at once: await_ready says so)
            self.proc.stdin.write(f"{self.token}\n".encode("ascii"))
        with contextlib.suppress(OSError):
            self.proc.stdin.close()

    def await_ready(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        listener, channel = self.sock, self._accept(deadline)
        if channel is None:
            _, err = self.take_output()
            self.kill()
            raise SandboxUnavailable(
                f"the worker did not connect back: {self.exit_description()}. "
                f"Its stderr: {err.strip() or 'empty'}"
            )
        self.sock = channel
        listener.close()
        super().await_ready(max(deadline - time.monotonic(), 0.0))

    def _accept(self, deadline: float) -> socket.socket | None:
        """The worker's connection: the first that sends the token before ``deadline``;
        None if the worker ended first or none did."""
        expected = self.token.encode("ascii")
        while time.monotonic() < deadline and self.proc.poll() is None:
            self.sock.settimeout(max(min(deadline - time.monotonic(), 0.25), 0.01))
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return None
            conn.settimeout(max(min(deadline - time.monotonic(), TOKEN_SECONDS), 0.01))
            try:
                got = _recv_exact(conn, len(expected))
            except OSError:
                got = b""
            if hmac.compare_digest(got, expected):
                conn.settimeout(None)
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                return conn
            conn.close()  # not the worker (another program of this machine)
        return None

    def exit_status(self, wait: float) -> int | None:
        try:
            return self.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            return None

    def cpu_seconds(self) -> float | None:
        if not cpu_time.available():  # (macOS, Windows: the wall clock alone counts)
            return None
        return cpu_time.pids_seconds(cpu_time.tree_pids(self.proc.pid))

    def kill(self) -> None:
        if self.ended:
            return
        self.ended = True
        _kill_tree(self.proc)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        self._close_channel()
        self._release()

    def _release(self) -> None:
        scratch.remove(self.tmp)
        scratch.remove(self.logs)


def _recv_exact(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            break
        data += chunk
    return data


def _own_process_group() -> dict[str, Any]:
    """Popen's arguments that put the worker in a process group of its own (so that what
    it starts is killed with it)."""
    if sys.platform == "win32":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


def _kill_tree(proc: subprocess.Popen) -> None:
    """Kill the worker and what it started: its process group (POSIX: the negative pid, as
    killpg does), its process tree (Windows' taskkill: a virtualenv's python.exe is a
    launcher whose child runs the code)."""
    if sys.platform == "win32":
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(
                ["taskkill", "/F", "/T", "/PID", str(proc.pid)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=10,
            )
    else:
        with contextlib.suppress(OSError):
            os.kill(-proc.pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        proc.kill()
