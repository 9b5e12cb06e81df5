"""Trusted code run over untrusted bytes, under a memory and time bound the bytes cannot break.

The grader's own code reads what a submission hands in (a notebook's JSON, the source it
scans): that is not student code, but what it builds is the student's to choose. A
1 MiB file can hold a notebook whose conversion builds gigabytes, or source whose syntax
tree is a million nodes; read in the grader's process, one such file would take the grader
down, and a class with it. So such reading runs in a child process, with the address space
and CPU time it may use capped, killed from here at a wall-clock deadline, and answering
plain JSON of a capped size. What goes wrong there (memory, time, a crash) is the bytes'
fault: ``TooCostly`` says which, for the caller to report as that submission's problem.

The child is a fork of this process where that is safe (Linux, one thread: no lock can be
held by a thread that does not exist in the child), else a new Python started with ``-I``
(threads, as in a Dask worker; Windows, which has no fork; macOS, whose system libraries
are not safe in a forked child), which imports the function's module.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from typing import Any

ANSWER_CAP = 64 << 20  # bytes of JSON an answer may have


@dataclasses.dataclass(frozen=True)
class Bound:
    memory_bytes: int = 512 << 20  # address space the child may add to what it starts with
    cpu_seconds: int = 10
    wall_seconds: float = 30.0


class TooCostly(Exception):
    """Reading the bytes broke its bound; ``why`` is 'memory', 'time' or 'crashed', and the
    message says it in words for the student's report."""

    def __init__(self, why: str, message: str):
        super().__init__(message)
        self.why = why


def call(target: str, argument: Any, bound: Bound = Bound()) -> Any:
    """``module:function`` applied to ``argument`` (JSON-able), in a bounded child; its
    JSON-able answer. Raises TooCostly when the bound was broken."""
    if sys.platform.startswith("linux") and hasattr(os, "fork") and threading.active_count() == 1:
        return _forked(target, argument, bound)
    return _spawned(target, argument, bound)


# --------------------------------------------------------------------------- the child's side


def _limit_self(bound: Bound) -> None:
    try:
        import resource
    except ImportError:  # (no rlimits on this system: the wall-clock deadline still holds)
        return
    used = _address_space_bytes()
    if used is not None:  # (elsewhere: the CPU limit and the deadline)
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        want = used + bound.memory_bytes
        if hard != resource.RLIM_INFINITY:
            want = min(want, hard)
        resource.setrlimit(resource.RLIMIT_AS, (want, hard))
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    want = bound.cpu_seconds if hard == resource.RLIM_INFINITY else min(bound.cpu_seconds, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (want, hard))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _address_space_bytes() -> int | None:
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _answer(target: str, argument: Any) -> bytes:
    try:
        module, _, name = target.partition(":")
        value = getattr(importlib.import_module(module), name)(argument)
        return json.dumps({"ok": value}).encode()
    except MemoryError:
        return b'{"memory": true}'
    except RecursionError:
        return b'{"error": "RecursionError"}'
    except Exception as exc:  # the reading code's own bug, met on these bytes
        return json.dumps({"error": f"{type(exc).__name__}: {str(exc)[:300]}"}).encode()


def _forked(target: str, argument: Any, bound: Bound) -> Any:
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        status = 1
        try:
            os.close(read_end)
            signal.alarm(0)  # (an alarm the parent set is not the child's)
            _limit_self(bound)
            _write_all(write_end, _answer(target, argument))
            status = 0
        except MemoryError:
            try:
                _write_all(write_end, b'{"memory": true}')
                status = 0
            except BaseException:
                pass
        except BaseException:
            pass
        finally:
            os._exit(status)  # no atexit handlers, no flush of buffers the parent owns
    os.close(write_end)
    try:
        data = _read_answer(read_end, time.monotonic() + bound.wall_seconds)
    finally:
        os.close(read_end)
        timed_out = data is None
        if timed_out:
            _kill(pid)
        _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return _decode(data, bound, signal_number=os.WTERMSIG(status))
    return _decode(data, bound, exit_code=os.WEXITSTATUS(status) if os.WIFEXITED(status) else status)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_answer(fd: int, deadline: float) -> bytes | None:
    """Everything the child writes until it closes the pipe; None at the deadline. More than
    the cap is cut off (and then does not decode)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            return None
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        if size <= ANSWER_CAP:
            chunks.append(chunk)
            size += len(chunk)


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


# The signals a child that ran out of CPU time dies of (Windows has neither).
_OUT_OF_TIME = {getattr(signal, name) for name in ("SIGXCPU", "SIGKILL") if hasattr(signal, name)}


def _decode(data: bytes | None, bound: Bound, signal_number: int | None = None, exit_code: int = 0) -> Any:
    """The child's answer, or TooCostly saying what broke (``signal_number``: the signal
    that ended it, else its ``exit_code``)."""
    seconds = f"{bound.cpu_seconds} s of CPU time"
    if data is None:
        raise TooCostly("time", f"reading it took more than {bound.wall_seconds:g} s")
    if signal_number in _OUT_OF_TIME:
        raise TooCostly("time", f"reading it needed more than {seconds}")
    if len(data) > ANSWER_CAP:
        raise TooCostly("memory", f"what it reads as is larger than {ANSWER_CAP >> 20} MiB")
    try:
        answer = json.loads(data) if data else None
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise TooCostly(
            "crashed",
            "the grader's reader stopped on it "
            f"({_ending(signal_number, exit_code)}); a file Jupyter or an editor saved reads fine",
        )
    if answer.get("memory"):
        raise TooCostly("memory", f"reading it needed more than {bound.memory_bytes >> 20} MiB of memory")
    if "error" in answer:
        raise TooCostly("crashed", f"the grader's reader stopped on it ({answer['error']})")
    return answer.get("ok")


def _ending(signal_number: int | None, exit_code: int) -> str:
    if signal_number is not None:
        return f"signal {signal_number}"
    return f"exit status {exit_code}"


# --------------------------------------------------------------------------- a new Python


def _spawned(target: str, argument: Any, bound: Bound) -> Any:
    request = json.dumps(
        {"target": target, "argument": argument, "bound": dataclasses.asdict(bound)}
    ).encode()
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-c", "from grader.submission.bounded import main; main()"],
            input=request,
            capture_output=True,
            timeout=bound.wall_seconds,
        )
    except subprocess.TimeoutExpired:
        return _decode(None, bound)
    if done.returncode < 0:  # (POSIX: the signal that ended it)
        return _decode(done.stdout, bound, signal_number=-done.returncode)
    return _decode(done.stdout, bound, exit_code=done.returncode)


def main() -> None:
    """The spawned child: a request on stdin, the answer on stdout."""
    request = json.loads(sys.stdin.buffer.read())
    _limit_self(Bound(**request["bound"]))
    sys.stdout.buffer.write(_answer(request["target"], request["argument"]))
    sys.stdout.flush()
