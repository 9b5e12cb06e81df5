"""Parent side of the sandbox: isolation tier, limits, timeouts and restarts.

A ``Sandbox`` grades one submission. It starts a worker process in the strongest tier that
works here (bubblewrap; else Landlock, which the worker applies to itself; else rlimits
only), in a cgroup of its own where one can be made, talks to it over a socketpair,
enforces a per-call time limit and a per-submission budget by SIGKILL from this side, and
replaces a worker that crashed or timed out so grading can go on with the next call.
"""
from __future__ import annotations

import ctypes
import functools
import importlib.util
import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

from . import landlock, wire
from .cgroup import Cgroup

WORKER_DIR = os.path.dirname(os.path.abspath(__file__))
BUBBLEWRAP, LANDLOCK, RLIMITS = "bubblewrap", "landlock", "rlimits"
SANDBOX_ROOT = "/submission"
STARTUP_SECONDS = 60  # python + numpy start; generous for a loaded machine
PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class Limits:
    """Resource limits for one submission (documented defaults fit numpy exercises)."""

    memory_mib: int = 2048
    call_seconds: float = 10.0
    submission_seconds: float = 60.0
    file_mib: int = 64
    open_files: int = 256
    processes: int = 64
    output_chars: int = 4000  # of stdout/stderr shown per call


class SandboxUnavailable(Exception):
    """The sandbox cannot run here: the strong tier was demanded but does not work, or a
    worker did not even start (before any student code ran): not the student's fault."""


@functools.lru_cache(maxsize=None)
def bubblewrap_works() -> bool:
    bwrap = shutil.which("bwrap")
    if not bwrap or not sys.platform.startswith("linux"):
        return False
    try:
        probe = subprocess.run([bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/",
                                "--proc", "/proc", "--dev", "/dev", "true"],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


@functools.lru_cache(maxsize=None)
def landlock_works() -> bool:
    return landlock.abi_version() >= 1


def choose_tier(requested: str = "auto") -> str:
    """``auto`` takes the strongest tier that works here; naming a tier refuses to degrade."""
    if requested == RLIMITS:
        return RLIMITS
    if requested in ("auto", BUBBLEWRAP) and bubblewrap_works():
        return BUBBLEWRAP
    if requested == BUBBLEWRAP:
        raise SandboxUnavailable(
            "the bubblewrap sandbox was required but does not work on this machine. "
            "Install it (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install "
            "bubblewrap) and make sure unprivileged user namespaces are allowed, or run with "
            "--isolation auto to grade in the strongest tier that works here.")
    if landlock_works():
        return LANDLOCK
    if requested == LANDLOCK:
        raise SandboxUnavailable("the landlock tier was required but this kernel has no "
                                 "Landlock (Linux 5.13 or newer with Landlock enabled).")
    return RLIMITS


def _worker_env() -> dict[str, str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8",
           # One BLAS thread: numpy then fits the address-space limit and costs no extra CPU.
           "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"}
    # Machine-specific BLAS kernel choices (not secrets) that some CPUs need to work at all.
    for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


@functools.lru_cache(maxsize=None)
def _runtime_dirs() -> list[str]:
    """Directories the worker's Python needs, bound read-only into the sandbox."""
    numpy = importlib.util.find_spec("numpy")  # where it is, without importing it
    dirs = {sys.prefix, sys.base_prefix, os.path.dirname(numpy.submodule_search_locations[0]),
            os.path.dirname(os.path.realpath(sys.executable))}
    dirs = sorted(os.path.realpath(d) for d in dirs) + sorted(dirs)
    kept: list[str] = []
    for d in dirs:
        if not d.startswith("/usr/") and d not in kept and not any(d.startswith(k + "/") for k in kept):
            kept.append(d)
    return kept


def _bubblewrap_command(submission: str, inner_path: str, fd: int) -> list[str]:
    # Order matters: bwrap mounts in argument order, so /tmp comes before binds that may
    # live under it (a virtualenv in /tmp would otherwise be hidden by the tmpfs).
    cmd = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
           "--uid", "65534", "--gid", "65534", "--proc", "/proc", "--dev", "/dev",
           "--tmpfs", "/tmp", "--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            cmd += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            cmd += ["--ro-bind", top, top]
    for d in _runtime_dirs():
        cmd += ["--ro-bind", d, d]
    cmd += ["--ro-bind", WORKER_DIR, "/opt/grader-worker",
            "--ro-bind", submission, inner_path, "--chdir", "/tmp", "--clearenv"]
    for key, value in _worker_env().items():
        cmd += ["--setenv", key, value]
    return cmd + ["--", sys.executable, "-I", "-B", "/opt/grader-worker/worker.py", str(fd)]


def _landlock_policy(submission: str, tmp: str) -> dict:
    """What a worker restricted by Landlock may still touch."""
    read = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/dev/urandom",
            WORKER_DIR, submission] + _runtime_dirs()
    return {"read": read, "write": [tmp, "/dev/null"]}


def _enter_child(limits: Limits, cgroup: Cgroup | None, tier: str) -> None:
    """Runs in the child between fork and exec: what it sets applies to all it starts."""
    if cgroup is not None:
        cgroup.enter()
    if tier != BUBBLEWRAP and sys.platform.startswith("linux"):  # bwrap has --die-with-parent
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # die with the grader
    _set_limits(limits)


def _set_limits(limits: Limits) -> None:
    mib = 1 << 20
    cpu = int(limits.submission_seconds) + 5
    wanted = [(resource.RLIMIT_AS, limits.memory_mib * mib),
              (resource.RLIMIT_CPU, cpu, cpu + 5),
              (resource.RLIMIT_FSIZE, limits.file_mib * mib),
              (resource.RLIMIT_NOFILE, limits.open_files),
              (resource.RLIMIT_CORE, 0)]
    if os.getuid() != 0:  # root ignores RLIMIT_NPROC; bubblewrap's PID namespace contains it there
        wanted.append((resource.RLIMIT_NPROC, limits.processes + _process_count(os.getuid())))
    for which, soft, *hard in wanted:
        resource.setrlimit(which, (soft, hard[0] if hard else soft))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the size cap fails, not kills


def _process_count(uid: int) -> int:
    count = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                count += os.stat(f"/proc/{entry}").st_uid == uid
            except OSError:
                pass
    return count


@dataclass
class CallOutcome:
    """What one call in the worker came to. ``status`` is one of
    ok, raised, timeout, crashed, malformed, budget."""

    status: str
    value: object = None
    inputs_after: object = None
    aliases_input: bool = False
    error: dict = field(default_factory=dict)
    stdout: str = ""
    stderr: str = ""


class _Process:
    """One live worker process and its channel."""

    def __init__(self, submission: str, limits: Limits, tier: str):
        self.limits, self.tier = limits, tier
        parent, child = socket.socketpair()
        self.sock = parent
        self.out = tempfile.TemporaryFile()
        self.err = tempfile.TemporaryFile()
        self.read_at = [0, 0]
        self.tmp = tempfile.mkdtemp(prefix="grader-tmp-")
        fd = child.fileno()
        if tier == BUBBLEWRAP:
            self.inner_path = f"{SANDBOX_ROOT}/{os.path.basename(submission)}"
            cmd, env, cwd = _bubblewrap_command(submission, self.inner_path, fd), {}, "/"
        else:
            self.inner_path = submission
            env = dict(_worker_env(), HOME=self.tmp, TMPDIR=self.tmp)
            cmd = [sys.executable, "-I", "-B", os.path.join(WORKER_DIR, "worker.py"), str(fd)]
            if tier == LANDLOCK:
                cmd.append(json.dumps({"landlock": _landlock_policy(submission, self.tmp)}))
            cwd = self.tmp
        # Cgroup first: its pids cap holds for root too, and it finds detached processes.
        self.cgroup = Cgroup.create(limits.processes, limits.memory_mib << 20)
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self.out,
                                     stderr=self.err, pass_fds=(fd,), env=env, cwd=cwd,
                                     start_new_session=True,
                                     preexec_fn=functools.partial(_enter_child, limits,
                                                                  self.cgroup, tier))
        child.close()
        self.ready = False

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

    def request(self, header: dict, blobs: list[bytes], deadline: float):
        wire.send(self.sock, header, blobs)
        return wire.recv(self.sock, deadline)

    def take_output(self) -> tuple[str, str]:
        """What the worker printed since the last call: all of it up to the cap, else the
        head and the tail (a script's answer is its last line)."""
        texts = []
        for i, f in enumerate((self.out, self.err)):
            size, start = os.fstat(f.fileno()).st_size, self.read_at[i]
            cap = self.limits.output_chars
            if size - start <= cap:
                data = os.pread(f.fileno(), cap, start) if size > start else b""
                text = data.decode("utf-8", "replace")
            else:
                tail = min(1000, cap // 4)
                head = os.pread(f.fileno(), cap - tail, start).decode("utf-8", "replace")
                end = os.pread(f.fileno(), tail, size - tail).decode("utf-8", "replace")
                text = f"{head}\n[... {size - start - cap} bytes not shown ...]\n{end}"
            self.read_at[i] = size
            texts.append(text)
        return texts[0], texts[1]

    def exit_description(self) -> str:
        try:
            code = self.proc.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            return "closed its result channel"
        if self.tier == BUBBLEWRAP and code > 128:
            code = 128 - code  # bwrap reports its child's death by signal N as status 128+N
        if code < 0:
            name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else -code
            return {"SIGKILL": "was killed (SIGKILL: usually the memory limit or a time limit)",
                    "SIGSEGV": "crashed (segmentation fault)",
                    "SIGXCPU": "used up its CPU-time limit"}.get(str(name), f"died from signal {name}")
        return f"exited with status {code}"

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
        self.sock.close()
        self.out.close()
        self.err.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


class Sandbox:
    """Runs one submission's calls in a worker, replacing the worker when it dies."""

    def __init__(self, submission: str, functions: list[str], limits: Limits = Limits(),
                 tier: str = RLIMITS):
        self.submission = os.path.abspath(submission)
        self.functions = list(functions)
        self.limits = limits
        self.tier = tier
        self.deadline = time.monotonic() + limits.submission_seconds
        self.process: _Process | None = None
        self.loaded = False
        self.restarts = 0

    # -- lifecycle
    def start(self) -> None:
        """Start a worker now (it warms up numpy while the grader does other work)."""
        if self.process is None:
            self.process = _Process(self.submission, self.limits, self.tier)
            self.loaded = False

    def close(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def budget_left(self) -> float:
        return self.deadline - time.monotonic()

    # -- requests
    def load(self) -> CallOutcome:
        """Import the submission in a fresh worker; ``value`` is the worker's description."""
        self.start()
        if not self.process.ready:
            self.process.await_ready(STARTUP_SECONDS)
        outcome = self._request({"op": "load", "path": self.process.inner_path,
                                 "functions": self.functions}, [])
        self.loaded = outcome.status == "ok"
        return outcome

    def run_script(self) -> CallOutcome:
        """Run the submission as a script in a fresh worker; ``value`` holds the numbers it
        left in its globals ({name: (array, type name)}) and what it imported."""
        self.start()
        if not self.process.ready:
            self.process.await_ready(STARTUP_SECONDS)
        return self._request({"op": "run", "path": self.process.inner_path}, [])

    def call(self, function: str, args: list, kwargs: dict | None = None,
             return_inputs: bool = False) -> CallOutcome:
        if self.process is None or not self.loaded:
            reload = self.load()
            if reload.status != "ok":
                return reload
        blobs: list[bytes] = []
        header = {"op": "call", "function": function, "args": wire.encode(list(args), blobs),
                  "kwargs": wire.encode(dict(kwargs or {}), blobs), "return_inputs": return_inputs}
        return self._request(header, blobs)

    def _request(self, header: dict, blobs: list[bytes]) -> CallOutcome:
        if self.budget_left() <= 0:
            return CallOutcome("budget", error={"message": (
                f"the submission used up its {self.limits.submission_seconds:g} s time budget")})
        limit = min(self.limits.call_seconds, self.budget_left())
        process = self.process
        try:
            reply, reply_blobs = process.request(header, blobs, time.monotonic() + limit)
            outcome = _outcome_from_reply(reply, reply_blobs)
        except wire.WireTimeout:
            outcome = CallOutcome("timeout", error={"message": f"did not finish within {limit:.3g} s"})
        except wire.WireClosed:
            outcome = CallOutcome("crashed", error={"message": f"the worker process {process.exit_description()}"})
        except (wire.WireError, OSError) as exc:
            outcome = CallOutcome("malformed", error={"message": f"the worker's answer was unusable: {exc}"})
        outcome.stdout, outcome.stderr = process.take_output()
        if outcome.status in ("timeout", "crashed", "malformed"):
            # Whatever state the worker is in now is unknown: replace it for the next call.
            process.kill()
            self.process = None
            self.restarts += 1
        return outcome


def _outcome_from_reply(reply: dict, blobs: list[bytes]) -> CallOutcome:
    if "globals" in reply:
        value = _script_info(reply, blobs)
        if reply.get("ok") is True:
            return CallOutcome("ok", value=value)
        return CallOutcome("raised", value=value, error=_clean_error(reply.get("error") or {}))
    if reply.get("ok") is True:
        return CallOutcome(
            "ok",
            value=wire.decode(reply.get("result"), blobs) if "result" in reply else _load_info(reply),
            inputs_after=wire.decode(reply["inputs_after"], blobs) if "inputs_after" in reply else None,
            aliases_input=reply.get("aliases_input") is True)
    if reply.get("ok") is False and isinstance(reply.get("error"), dict):
        return CallOutcome("raised", value=_load_info(reply), error=_clean_error(reply["error"]))
    raise wire.WireError("answer has neither a result nor an error")


def _load_info(reply: dict) -> dict:
    """The load answer: which functions exist and what the submission imported (evidence)."""
    functions = reply.get("functions", {})
    imports = reply.get("imports", [])
    if not isinstance(functions, dict) or not isinstance(imports, list):
        raise wire.WireError("malformed load answer")
    return {"functions": {str(k)[:100]: v for k, v in functions.items() if isinstance(v, dict)},
            "imports": [str(m)[:100] for m in imports[:100]]}


def _script_info(reply: dict, blobs: list[bytes]) -> dict:
    left = reply.get("globals")
    if not isinstance(left, dict) or not isinstance(reply.get("imports", []), list):
        raise wire.WireError("malformed script answer")
    arrays = {}
    for name, entry in list(left.items())[:64]:
        if not isinstance(entry, dict) or type(entry.get("$nd")) is not int:
            raise wire.WireError("malformed script answer")
        arrays[str(name)[:100]] = (wire.decode({"$nd": entry["$nd"]}, blobs),
                                   str(entry.get("type", "?"))[:100])
    return {"globals": arrays, "imports": [str(m)[:100] for m in reply.get("imports", [])[:100]]}


def _clean_error(error: dict) -> dict:
    frames = error.get("frames", [])
    if not isinstance(frames, list):
        frames = []
    return {"type": str(error.get("type", "Error"))[:100],
            "missing_module": str(error["missing_module"])[:100] if error.get("missing_module") else None,
            "message": str(error.get("message", ""))[:4000],
            "line": error.get("line") if type(error.get("line")) is int else None,
            "frames": [{"line": f.get("line") if type(f.get("line")) is int else None,
                        "function": str(f.get("function", ""))[:100],
                        "code": str(f.get("code", ""))[:200]}
                       for f in frames[:5] if isinstance(f, dict)]}
