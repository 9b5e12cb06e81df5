"""The protocol every isolation tier follows, and what tiers share.

A tier says whether it works here (and why not), how a worker is started in it (the command,
the confinement the worker applies to itself, what its child does between fork and exec),
how to read a worker's exit status, what is weaker about it than the strongest tier, and
whether warm workers (a fork server, warm.py) can use it and how that server is started.
The registry (tiers/__init__.py) holds one object per tier, strongest first.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass
from typing import ClassVar

from grader.records.limits import Limits
from grader.sandbox import cgroup, cpu_time, inside
from grader.sandbox.inside import landlock, protocol, syscalls
from grader.sandbox.inside import limits as inside_limits

# Everything that runs inside the sandbox lives in this folder (and bwrap shows only it).
WORKER_DIR = os.path.dirname(os.path.abspath(inside.__file__))
PR_SET_PDEATHSIG = 1


class SandboxUnavailable(Exception):
    """The sandbox cannot run here: the strong tier was demanded but does not work, or a
    worker did not even start (before any student code ran): not the student's fault."""


@dataclass(frozen=True)
class Start:
    """How to start one sandboxed process (a worker or a fork server): its command line,
    environment and working directory, and its private folder as the process sees it.
    ``host_folder``: a folder of the machine the tier made for it, removed afterwards."""

    command: list[str]
    env: dict[str, str]
    cwd: str
    folder: str
    host_folder: str | None = None


class Tier:
    """One isolation tier. Subclasses set the class attributes and override what differs;
    the defaults describe a worker that runs on the machine's own filesystem (as the
    grader's user) and confines itself as ``confinement`` says."""

    name: ClassVar[str]
    # What is weaker about it than the strongest tier, said on stderr and in every report
    # graded in it ("" for the strongest).
    weakness: ClassVar[str] = ""
    # Why someone else's work (a class, Gradescope, CI with hidden checks) is never graded
    # in it; "" where it may be.
    unsafe_for_others_work: ClassVar[str] = ""
    # Its walls are file permissions: the grader refuses to grade while what a worker must
    # not read or write is open to every user (refuse_open_paths).
    file_permissions_are_walls: ClassVar[bool] = False
    # Where a process started in this tier sees WORKER_DIR.
    worker_dir: ClassVar[str] = WORKER_DIR
    # Only for a kit checked by its own student (choose_tier's ``kit``), never taken for
    # anything else, asked for or not (the unsandboxed tier).
    kit_only: ClassVar[bool] = False
    # Its worker is a plain subprocess (plain_worker.py): no set-up between fork and exec,
    # no descriptor passed, a loopback channel; else a FreshWorker (process.py).
    plain_process: ClassVar[bool] = False

    # -- here or not
    def works(self) -> bool:
        raise NotImplementedError

    def missing(self) -> str:
        """Why it does not work here, in a few words (a refusal lists them)."""
        raise NotImplementedError

    def refusal(self) -> str:
        """The refusal when this tier was required and does not work: why, and the fix."""
        raise NotImplementedError

    def described_weakness(self) -> str:
        """``weakness`` with what is known of this machine (said in every report)."""
        return self.weakness

    def downgrade(self, strongest: str, why: str) -> str:
        """The note of a grade in this tier, below ``strongest``, which was not used because
        ``why`` (said on stderr and in every report)."""
        weakness = self.described_weakness()
        gaps = self.gaps()
        if gaps:
            weakness += f"; its workers could share state here: {'; '.join(gaps)}"
        return f"graded in the {self.name} tier ({weakness}), not {strongest}: {why}"

    def gaps(self) -> list[str]:
        """What a worker of this tier could share with another here (state that outlives
        it: files, IPC objects, processes), in words; [] when workers are kept apart. A
        tier with gaps grades someone else's work only when the instructor accepts them
        (choose_tier's ``shared_state``)."""
        return []

    # -- a fresh worker
    def worker(self, channel: int, limits: Limits, folder: str, in_cgroup: bool) -> Start:
        """How to start worker.py, its channel on descriptor ``channel``, its private
        folder ``folder`` (made by the grader on the machine). ``in_cgroup``: the worker is
        in a cgroup of its own that holds all it starts and keeps the CPU time of those
        that ended (else it may start no process where it has no PID namespace)."""
        command = self.python(
            "worker.py",
            str(channel),
            json.dumps({**self.confinement(limits, folder, in_cgroup), "preload": list(limits.preload)}),
        )
        return Start(command, dict(worker_env(), HOME=folder, TMPDIR=folder), folder, folder)

    def confinement(self, limits: Limits, folder: str, in_cgroup: bool) -> protocol.Confinement:
        """What the worker applies to itself before it says hello (worker.become_worker)."""
        raise NotImplementedError

    def started(self, pid: int, folder: str) -> None:
        """After the worker process ``pid`` started (before it is asked anything)."""

    def enter(self) -> None:
        """In the child between fork and exec, after its cgroup, keyring and rlimits."""
        die_with_parent()

    def cpu_seconds(self, pid: int) -> float:
        """CPU time worker ``pid`` and what it started used, where it has no cgroup: its
        process tree (cpu_time.py)."""
        return cpu_time.pids_seconds(cpu_time.tree_pids(pid))

    def ended(self, pid: int, folder: str) -> None:
        """After worker ``pid`` and its process group were sent SIGKILL, before it is reaped
        (so its pid is no other process's yet) and its folder removed: what else of it must
        go."""

    def exit_status(self, code: int) -> int:
        """The worker's exit status (negative: the signal that killed it) from the status
        of the process the grader started."""
        return code

    # -- warm workers
    def warm_works(self) -> bool:
        """Whether a fork server can run in this tier here (warm.py)."""
        return False

    def fork_server(self, channel: int, limits: Limits, config: protocol.ForkServerConfig) -> Start:
        """How to start forkserver.py with ``config`` (completed here with where its
        scratch space is and how it and its workers confine themselves)."""
        raise SandboxUnavailable(f"warm workers cannot use the {self.name} tier")

    # -- helpers for subclasses
    def python(self, script: str, *args: str) -> list[str]:
        """Run one of the inside scripts with the grader's Python, isolated from user site
        and environment (``-I``)."""
        return [sys.executable, "-I", "-B", os.path.join(self.worker_dir, script), *args]

    def probe(self, script: str, *args: str) -> bool:
        """Whether one of the inside scripts, run as this tier runs a worker, exits 0."""
        return succeeds(self.python(script, *args), env=worker_env())

    def landlock_policy(self, read: list[str], write: list[str]) -> protocol.LandlockPolicy:
        """What a process restricted by Landlock may still touch: the runtime, the machine
        facts frameworks size themselves by, its own process's harmless /proc entries
        (landlock.OWN_PROCESS_FILES) and ``read``; writing only ``write`` (and /dev/null)."""
        runtime = [
            "/usr",
            "/bin",
            "/sbin",
            "/lib",
            "/lib32",
            "/lib64",
            "/libx32",
            "/dev/urandom",
            self.worker_dir,
        ] + runtime_dirs()
        return {
            "read": runtime + list(MACHINE_FACTS) + list(read),
            "write": list(write) + ["/dev/null"],
            "own_process": True,
        }

    def __repr__(self) -> str:
        return f"<tier {self.name}>"


# What TensorFlow and PyTorch read of the machine to size their thread pools and memory
# (CPUs, caches, NUMA nodes, the CPU set), read-only; any process on the machine may read
# them. Without them PyTorch prints "Error in cpuinfo" and guesses.
MACHINE_FACTS = (
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/proc/stat",
    "/sys/devices/system/cpu",
    "/sys/devices/system/node",
    "/sys/bus/cpu/devices",
    "/sys/bus/node/devices",
    "/sys/kernel/mm/hugepages",
    "/sys/fs/cgroup/cpuset/cpuset.cpus",
    "/sys/fs/cgroup/cpuset/cpuset.mems",
    "/sys/fs/cgroup/cpuset.cpus.effective",
    "/etc/localtime",
)


def sandbox_missing() -> str:
    """Why this system cannot start a sandboxed worker at all, whatever the tier ("" where it
    can): every tier but the unsandboxed one starts its worker on Linux (its /proc counts a
    worker's CPU time and processes), under rlimits (``resource``) set between fork and
    exec (``preexec_fn``, which needs fork), with its channel passed as a descriptor
    (``pass_fds``) and, for a mutation check, arrays in shared memory passed the same way
    (``socket.send_fds``). macOS and Windows lack some of these."""
    lacking = []
    if not sys.platform.startswith("linux"):
        lacking.append(f"not Linux ({sys.platform})")
    if not inside_limits.available():
        lacking.append("no rlimits (resource)")
    if not hasattr(os, "fork"):
        lacking.append("no fork")
    if not (hasattr(socket, "send_fds") and hasattr(socket, "recv_fds") and hasattr(socket, "AF_UNIX")):
        lacking.append("no descriptor passing (socket.send_fds)")
    if not lacking:
        return ""
    return f"this system cannot start a sandboxed worker: {', '.join(lacking)}"


def succeeds(cmd: list[str], env: dict[str, str] | None = None) -> bool:
    """Whether a probe command runs and exits with status 0 (silently, within 20 s)."""
    try:
        done = subprocess.run(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            timeout=20,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def die_with_parent() -> None:
    """The calling process gets SIGKILL when the grader dies (bwrap has --die-with-parent)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


# Frameworks' thread pools sized to a worker's share of the machine: one core (a batch runs
# one worker per core, and a call's limit counts the CPU time of every thread), so TensorFlow
# (intra- and inter-op pools) and PyTorch (OMP_NUM_THREADS above) run one thread each; and
# their log lines at start-up (CPU features, oneDNN notices) are not written at all.
FRAMEWORK_ENV = {
    "TF_NUM_INTRAOP_THREADS": "1",
    "TF_NUM_INTEROP_THREADS": "1",
    "TF_CPP_MIN_LOG_LEVEL": "2",
    "KMP_WARNINGS": "0",
    "GRPC_VERBOSITY": "ERROR",
}


def worker_env() -> dict[str, str]:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        # One BLAS thread: numpy then fits the address-space limit and costs no extra CPU.
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    env.update(FRAMEWORK_ENV)
    # Machine-specific BLAS kernel choices (not secrets) that some CPUs need to work at all.
    for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


@functools.cache
def runtime_dirs() -> list[str]:
    """Directories the worker's Python needs (bound read-only into bwrap's sandbox)."""
    numpy = importlib.util.find_spec("numpy")  # where it is, without importing it
    assert numpy is not None and numpy.submodule_search_locations is not None
    found = {
        sys.prefix,
        sys.base_prefix,
        os.path.dirname(numpy.submodule_search_locations[0]),
        os.path.dirname(os.path.realpath(sys.executable)),
    }
    dirs = sorted(os.path.realpath(d) for d in found) + sorted(found)
    kept: list[str] = []
    for d in dirs:
        if not d.startswith("/usr/") and d not in kept and not any(d.startswith(k + "/") for k in kept):
            kept.append(d)
    return kept


@functools.cache
def private_namespaces_work(tier: Tier) -> bool:
    """Whether a worker can enter user, IPC and network namespaces of its own in ``tier``
    (namespaces.py; user namespaces may be disabled, or not nest inside bwrap's)."""
    return tier.probe("namespaces.py")


@functools.cache
def syscall_filter_works() -> bool:
    """Whether a worker can forbid itself system calls here (syscalls.py: new sockets,
    the kernel's keyrings, IPC objects, new processes)."""
    return syscalls.available()


@functools.cache
def cgroups_work() -> bool:
    """Whether the grader may make cgroups here (asked once per process)."""
    return cgroup.available()


def no_filter_gaps(ipc: bool) -> list[str]:
    """What a worker could share where it cannot forbid itself system calls: with ``ipc``
    (no IPC namespace of its own), SysV IPC objects and POSIX message queues; without a
    cgroup, processes that outlive it."""
    if syscall_filter_works():
        return []
    gaps = (
        [
            "SysV IPC objects and POSIX message queues outlive the worker that made them "
            "and are open to the next (no IPC namespace of its own, and no system-call filter)"
        ]
        if ipc
        else []
    )
    if not cgroups_work():
        gaps.append(
            "a process a worker starts can outlive it and hide its CPU time (no cgroup, "
            "and no system-call filter to forbid new processes)"
        )
    return gaps


def forks_confined_workers() -> bool:
    """What warm workers need in every tier: Landlock ABI 6 (a forked worker can neither
    signal nor trace its server or earlier workers) and a cgroup the grader may make (the
    sweep between submissions)."""
    return landlock.abi_version() >= 6 and cgroup.available()
