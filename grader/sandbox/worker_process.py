"""One live worker process seen from the grader, whatever started it: its channel, its
captured output (capped, shown per call), how it ended. ``FreshWorker`` (process.py) starts
a new sandboxed Python, warm.py forks one from a warm process, ``PlainWorker``
(plain_worker.py) starts a plain subprocess (the unsandboxed tier): all look the same to the
Sandbox."""

from __future__ import annotations

import os
import signal
import socket
import tempfile
import time
from collections.abc import Callable
from typing import IO

from grader.records.limits import Limits
from grader.sandbox.inside import protocol, wire
from grader.sandbox.tiers import SandboxUnavailable
from grader.student_text import output as visible_output

SUBMISSION_NAME = "submission.py"  # the worker's private copy (no student-chosen name)


class WorkerProcess:
    """A worker's channel and captured stdout/stderr. Subclasses start it and end it."""

    inner_path: str  # where the worker writes its private copy of the submission
    # A mutation check's arrays go to it in shared memory (shared.py); False: it sends them
    # back after the call (the unsandboxed tier: call_request.py).
    shares_memory = True

    def __init__(
        self,
        limits: Limits,
        sock: socket.socket,
        out: IO[bytes] | None = None,
        err: IO[bytes] | None = None,
    ):
        self.limits = limits
        self.sock = sock
        # What the worker's stdout and stderr are (given to it), and what they are read
        # through here: the same files where a read at an offset (os.pread) leaves the
        # position the worker shares alone; elsewhere (Windows) handles of their own.
        self.out = out if out is not None else tempfile.TemporaryFile()
        self.err = err if err is not None else tempfile.TemporaryFile()
        self.readers: tuple[IO[bytes], IO[bytes]] = (self.out, self.err)
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
        for i, f in enumerate(self.readers):
            start = self.read_at[i]
            if until is not None and until[i] <= start:
                texts.append("")  # (the usual answer: nothing printed since the last)
                continue
            size = os.fstat(f.fileno()).st_size
            if until is not None:
                size = max(start, min(size, until[i]))
            cap = self.limits.output_chars
            if size - start <= cap:
                data = _read_at(f, size - start, start) if size > start else b""
                text = data.decode("utf-8", "replace")
            else:
                tail = min(1000, cap // 4)
                room = max(cap - tail - 64, 0)  # leaves room for the mark within the cap
                head = _read_at(f, room, start).decode("utf-8", "replace")
                end = _read_at(f, tail, size - tail).decode("utf-8", "replace")
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
        for f in {id(f): f for f in (self.out, self.err, *self.readers)}.values():
            f.close()


def _read_at(f: IO[bytes], size: int, offset: int) -> bytes:
    """``size`` bytes of ``f`` from ``offset``: os.pread where there is one (the position
    the worker writes at is left alone); elsewhere (Windows) ``f`` is a handle of this
    side's own, whose position no one else uses."""
    if hasattr(os, "pread"):
        return os.pread(f.fileno(), size, offset)
    f.seek(offset)
    return f.read(size)


# Makes a worker for (limits, tier): a fresh one (process.fresh_worker), or one forked from a
# warm server (warm.py).
Spawner = Callable[[Limits, str], WorkerProcess]
