"""A warm process that never runs student code: it forks one worker per submission.

Runs as ``python -I forkserver.py CONTROL_FD CONFIG_JSON`` inside the sandbox (bubblewrap or
Landlock tier). numpy is imported once, here; a submission then costs a fork instead of a
new Python. It never receives a submission's text (the grader sends that to the forked
worker itself), so nothing of one student can reach the next one through its memory.

Each forked worker, before it says hello and before any student code runs:
  - keeps only its own channel and output files (the control socket is closed),
  - gets a new private folder as home and working directory, the only place it may write,
    on a size-capped tmpfs (bwrap's /tmp, or outside bwrap one this server mounted in
    user and mount namespaces of its own before it restricted itself); the folder is
    removed afterwards even if the worker made parts of it unlistable,
  - enters user, IPC and network namespaces of its own (namespaces.py) and a new empty
    session keyring, and may open no new socket and use no key (syscalls.py),
  - sets the per-submission rlimits and dies with this server,
  - applies its own Landlock domain: it reads only the runtime and its folder, reaches no
    TCP port, and signals or traces nothing outside itself: not this server, not the
    processes of earlier submissions.
The grader kills whatever a worker left behind (a cgroup sweep) before the next fork.

Control messages are JSON datagrams on a SOCK_SEQPACKET socket; a fork request carries the
worker's channel and its stdout/stderr files as file descriptors.
"""

from __future__ import annotations

import ctypes
import gc
import importlib
import json
import os
import random
import signal
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import limits  # noqa: E402
import protocol  # noqa: E402
import scratch  # noqa: E402
import worker  # noqa: E402  (with it numpy, which every worker then inherits warm)

MESSAGE_BYTES = 4096
PR_SET_PDEATHSIG = 1


def _send(control: socket.socket, message: dict) -> None:
    control.send(json.dumps(message).encode())


class Server:
    """The loop inside the sandbox: forks workers, reports how they ended, cleans up."""

    def __init__(self, control: socket.socket, config: protocol.ForkServerConfig):
        self.control = control
        self.config = config
        self.root = config["scratch_root"]
        self.count = 0
        self.children: dict[int, str] = {}  # pid -> its private folder
        self.statuses: dict[int, int] = {}  # pid -> exit status, once reaped

    def serve(self) -> None:
        while True:
            try:
                data, fds, _, _ = socket.recv_fds(self.control, MESSAGE_BYTES, 3)
            except OSError:
                return
            if not data:
                return
            try:
                message: protocol.ForkServerRequest = json.loads(data)
                op = message.get("op")
                if op == protocol.FORK and len(fds) == 3:
                    reply = self.fork(*fds)
                elif op == protocol.STATUS:
                    reply = {"status": self.wait(int(message["pid"]), float(message.get("wait", 0)))}
                elif op == protocol.END:
                    reply = self.end(int(message["pid"]))
                elif op == protocol.USAGE:
                    reply = scratch.usage(self.root)
                else:
                    reply = {"error": f"bad request {op!r}"}
            except Exception as exc:  # a bad request is reported, never fatal here
                reply = {"error": f"{type(exc).__name__}: {exc}"}
            finally:
                for fd in fds:
                    os.close(fd)
            _send(self.control, reply)

    def fork(self, channel: int, out: int, err: int) -> dict:
        self.count += 1
        folder = os.path.join(self.root, f"w{self.count}")
        os.mkdir(folder, 0o700)
        pid = os.fork()
        if pid == 0:
            try:
                self._become_worker(channel, out, err, folder)
            except BaseException as exc:
                try:
                    worker.wire.send(
                        socket.socket(fileno=channel),
                        {"op": protocol.NOT_READY, "error": f"{type(exc).__name__}: {exc}"},
                    )
                except BaseException:
                    pass
            os._exit(1)
        self.children[pid] = folder
        return {"pid": pid, "scratch": folder}

    def _become_worker(self, channel: int, out: int, err: int, folder: str) -> None:
        """In the forked child: shed everything of the server, then become a worker."""
        server = os.getppid()
        libc = ctypes.CDLL(None)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != server:  # the server died before the line above took effect
            os._exit(1)
        os.setsid()
        self.control.close()
        os.dup2(out, 1)
        os.dup2(err, 2)
        os.closerange(3, channel)
        os.closerange(channel + 1, 1 << 16)
        limits.apply(self.config["rlimits"])
        os.chdir(folder)
        os.environ.update(HOME=folder, TMPDIR=folder)
        # Random state as a new process would have it: numpy.random is not loaded here (numpy
        # loads it on first use, seeded from the OS), and Python's random is seeded afresh.
        random.seed()
        gc.enable()
        policy = self.config["worker_landlock"]
        policy = dict(policy, read=policy["read"] + [folder], write=policy["write"] + [folder])
        worker.become_worker(
            socket.socket(fileno=channel),
            {
                "private_namespaces": True,
                "deny_sockets": self.config["deny_sockets"],
                "deny_keys": self.config.get("deny_keys") is True,
                "landlock": policy,
            },
        )

    def wait(self, pid: int, seconds: float) -> int | None:
        """The worker's exit status once it has ended (negative: the signal that ended it)."""
        if pid in self.statuses:
            return self.statuses[pid]
        if pid not in self.children:
            raise ValueError(f"{pid} is not a worker of this server")
        deadline = time.monotonic() + seconds
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                self.statuses[pid] = os.waitstatus_to_exitcode(status)
                return self.statuses[pid]
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.005)

    def end(self, pid: int) -> dict:
        """Kill the worker (if it still runs), reap it and remove its folder (whatever
        the worker did to its rights; the grader then checks the scratch space is back to
        what it was after start-up)."""
        folder = self.children.pop(pid, None)
        if folder is None:
            raise ValueError(f"{pid} is not a worker of this server")
        if pid not in self.statuses:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
        self.statuses.pop(pid, None)
        scratch.remove(folder)
        return {"ok": True}


def main() -> None:
    control = socket.socket(fileno=int(sys.argv[1]))
    config: protocol.ForkServerConfig = json.loads(sys.argv[2])
    try:
        os.makedirs(config["scratch_root"], exist_ok=True)
        if config.get("scratch_bytes"):  # before Landlock, which forbids every mount
            import namespaces

            namespaces.enter_scratch(config["scratch_root"], int(config["scratch_bytes"]))
        if config["deny_sockets"]:
            importlib.import_module("pyseccomp")  # loaded once here, applied by each worker
        if config.get("server_landlock"):
            import landlock

            policy = config["server_landlock"]
            landlock.restrict(policy["read"], policy["write"], policy.get("own_process") is True)
    except (OSError, ImportError, RuntimeError) as exc:
        _send(control, {"op": protocol.NOT_READY, "error": f"the fork server could not start: {exc}"})
        os._exit(1)
    # The frameworks the task allows, imported once here (they start no thread on import, so
    # forking stays safe); every worker inherits them warm, outside its student's clock.
    import preload

    preload.preload(config.get("preload"))
    # What the server holds now is shared with every worker; freezing it keeps the workers'
    # garbage collector from touching (and so copying) those pages.
    gc.collect()
    gc.freeze()
    gc.disable()
    _send(control, {"op": protocol.READY})
    Server(control, config).serve()
    os._exit(0)


if __name__ == "__main__":
    main()
