"""One live worker process seen from the grader: its channel, its captured output, how it
ended. ``FreshWorker`` starts a new sandboxed Python for one submission; warm.py forks
workers from a warm process instead. Both look the same to the Sandbox."""
from __future__ import annotations

import ctypes
import functools
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

from . import keyring, scratch, wire
from ..student_text import output as visible_output
from .cgroup import Cgroup
from .limits import Limits, rlimits
from .limits import apply as apply_limits
from .tiers import (BUBBLEWRAP, LANDLOCK, UNPRIVILEGED, WORKER_UID_BASE, SandboxUnavailable,
                    become_user, bubblewrap_command, landlock_policy, private_namespaces_work, private_scratch_works, python_command,
                    syscall_filter_works, worker_env)

SUBMISSION_NAME = "submission.py"   # the worker's private copy (no student-chosen name)
PR_SET_PDEATHSIG = 1


class WorkerProcess:
    """A worker's channel and captured stdout/stderr. Subclasses start it and end it."""

    inner_path: str              # where the worker writes its private copy of the submission

    def __init__(self, limits: Limits):
        self.limits = limits
        self.out = tempfile.TemporaryFile()
        self.err = tempfile.TemporaryFile()
        self.read_at = [0, 0]
        self.ready = False
        self.sock: socket.socket | None = None

    def await_ready(self, seconds: float) -> None:
        """The worker says hello before it touches the submission; without it, the sandbox
        itself is broken and no grade can be given."""
        try:
            header, _ = wire.recv(self.sock, time.monotonic() + seconds)
        except wire.WireError as exc:
            header = {"error": str(exc)}
        if header.get("op") != "ready":
            _, err = self.take_output()
            self.kill()
            raise SandboxUnavailable(f"the sandbox worker did not start: {header.get('error', 'no hello')}. "
                                     f"Its stderr: {err.strip() or 'empty'}")
        self.ready = True

    def take_output(self, until: tuple[int, int] | None = None) -> tuple[str, str]:
        """What the worker printed since the last call (up to ``until``, where the worker
        said this call's output ends): all of it up to the cap, else the head and the tail
        (a script's answer is its last line)."""
        texts = []
        for i, f in enumerate((self.out, self.err)):
            size, start = os.fstat(f.fileno()).st_size, self.read_at[i]
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
        cap = self.limits.output_chars  # now in bytes of text with its control characters shown
        return visible_output(texts[0], cap), visible_output(texts[1], cap)

    def exit_description(self) -> str:
        code = self.exit_status(0.5)
        if code is None:
            return "closed its result channel"
        if code < 0:
            name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else -code
            return {"SIGKILL": "was killed (SIGKILL: usually the memory limit or a time limit)",
                    "SIGSEGV": "crashed (segmentation fault)",
                    "SIGXCPU": "used up its CPU-time limit"}.get(str(name), f"died from signal {name}")
        return f"exited with status {code}"

    def exit_status(self, wait: float) -> int | None:
        """The worker's exit status (negative: killed by that signal); None if it still runs."""
        raise NotImplementedError

    def kill(self) -> None:
        """End the worker and everything it started; release what it held."""
        raise NotImplementedError

    def _close_channel(self) -> None:
        if self.sock is not None:
            self.sock.close()
        self.out.close()
        self.err.close()


class FreshWorker(WorkerProcess):
    """A new sandboxed Python that imports numpy, then the one submission."""

    def __init__(self, limits: Limits, tier: str):
        super().__init__(limits)
        self.tier = tier
        parent, child = socket.socketpair()
        self.sock = parent
        self.tmp = tempfile.mkdtemp(prefix="grader-tmp-")
        fd = child.fileno()
        # Every tier: no key system calls (the kernel's keyrings outlive every namespace).
        # Sockets as each tier needs: bwrap's network namespace holds no socket of the
        # machine, the rlimits tier keeps the network by design.
        keys = syscall_filter_works()
        if tier == BUBBLEWRAP:
            self.inner_path = f"/tmp/{SUBMISSION_NAME}"  # bwrap's private /tmp
            command = python_command("worker.py", str(fd), json.dumps({"deny_keys": keys}),
                                     inside_bubblewrap=True)
            cmd = bubblewrap_command([], command, tmp_bytes=limits.scratch_mib << 20)
            env, cwd = {}, "/"
        else:
            self.inner_path = os.path.join(self.tmp, SUBMISSION_NAME)
            env = dict(worker_env(), HOME=self.tmp, TMPDIR=self.tmp)
            cmd = python_command("worker.py", str(fd), inside_bubblewrap=False)
            if tier == LANDLOCK:
                # Namespaces of its own take every capability away (there is no bwrap here
                # to drop them when the grader runs as root); where there can be none, the
                # capabilities are dropped. No new sockets: the machine's named UNIX
                # sockets are in reach here. Its folder is a capped tmpfs of its own where
                # a mount namespace can be had, else (say, root in a container) a folder on
                # the machine's disk, capped only per file.
                namespaces = private_namespaces_work(LANDLOCK)
                capped = namespaces and private_scratch_works()
                cmd.append(json.dumps({"landlock": landlock_policy([], [self.tmp]),
                                       "private_namespaces": namespaces,
                                       "scratch": [self.tmp, limits.scratch_mib << 20] if capped else None,
                                       "drop_capabilities": not namespaces and runs_as_root(),
                                       "deny_sockets": keys, "deny_keys": keys}))
            elif tier == UNPRIVILEGED:
                # A user of its own (set in enter_child): file permissions are its walls;
                # no new sockets either (the machine's network and named sockets).
                cmd.append(json.dumps({"deny_sockets": keys, "deny_keys": keys}))
            else:
                cmd.append(json.dumps({"deny_keys": keys}))
            cwd = self.tmp
        # Cgroup first: its pids cap holds for root too, and it finds detached processes.
        self.cgroup = Cgroup.create(limits.processes, limits.memory_mib << 20)
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self.out,
                                     stderr=self.err, pass_fds=(fd,), env=env, cwd=cwd,
                                     start_new_session=True,
                                     preexec_fn=functools.partial(enter_child, rlimits(limits),
                                                                  self.cgroup, tier))
        child.close()
        if tier == UNPRIVILEGED:  # its folder is its own (it writes nothing before it is asked)
            os.chown(self.tmp, WORKER_UID_BASE + self.proc.pid, WORKER_UID_BASE + self.proc.pid)

    def exit_status(self, wait: float) -> int | None:
        try:
            code = self.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            return None
        if self.tier == BUBBLEWRAP and code > 128:
            code = 128 - code  # bwrap reports its child's death by signal N as status 128+N
        return code

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self.cgroup is not None:
            self.cgroup.kill_all()  # also what left the process group (setsid, double fork)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None
        self._close_channel()
        scratch.remove(self.tmp)  # folders the worker made unlistable included


def runs_as_root() -> bool:
    return os.getuid() == 0


def enter_child(limits: list[tuple[int, int, int]], cgroup: Cgroup | None, tier: str) -> None:
    """Runs in the child between fork and exec: what it sets applies to all it starts,
    a new empty session keyring included (none of the grader's keys is in reach)."""
    if cgroup is not None:
        cgroup.enter()
    keyring.join_new_session()
    apply_limits(limits)
    if tier == UNPRIVILEGED:
        become_user(WORKER_UID_BASE + os.getpid())
    if tier != BUBBLEWRAP and sys.platform.startswith("linux"):  # bwrap has --die-with-parent
        # (after become_user: a change of user clears the parent-death signal)
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # die with the grader
