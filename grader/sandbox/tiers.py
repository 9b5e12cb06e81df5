"""Isolation tiers: which one works here, and how a sandboxed process is started in each.

``bubblewrap``: every namespace unshared, only the runtime and the submission visible.
``landlock``: where bwrap fails, the process restricts itself before any student code runs.
``rlimits``: resource limits only (a student checking their own file).
"""
from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import subprocess
import sys

from . import landlock, syscalls

BUBBLEWRAP, LANDLOCK, RLIMITS = "bubblewrap", "landlock", "rlimits"
WORKER_DIR = os.path.dirname(os.path.abspath(__file__))
WORKER_DIR_INSIDE = "/opt/grader-worker"   # where bwrap shows WORKER_DIR


class SandboxUnavailable(Exception):
    """The sandbox cannot run here: the strong tier was demanded but does not work, or a
    worker did not even start (before any student code ran): not the student's fault."""


@functools.lru_cache(maxsize=None)
def bubblewrap_works() -> bool:
    bwrap = shutil.which("bwrap")
    if not bwrap or not sys.platform.startswith("linux"):
        return False
    return _succeeds([bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/",
                      "--proc", "/proc", "--dev", "/dev", "true"])


def _succeeds(cmd: list[str], env: dict | None = None) -> bool:
    """Whether a probe command runs and exits with status 0 (silently, within 20 s)."""
    try:
        done = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, env=env, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


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
        from .userns import why_bubblewrap_fails
        raise SandboxUnavailable(
            "the bubblewrap sandbox was required but does not work on this machine: "
            f"{why_bubblewrap_fails()} Or run with --isolation auto to grade in the strongest "
            "tier that works here.")
    if landlock_works():
        return LANDLOCK
    if requested == LANDLOCK:
        raise SandboxUnavailable("the landlock tier was required but this kernel has no "
                                 "Landlock (Linux 5.13 or newer with Landlock enabled).")
    return RLIMITS


def worker_env() -> dict[str, str]:
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
def runtime_dirs() -> list[str]:
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


def python_command(script: str, *args: str, inside_bubblewrap: bool) -> list[str]:
    """Run one of this folder's scripts with the grader's Python, isolated from user site
    and environment (``-I``)."""
    folder = WORKER_DIR_INSIDE if inside_bubblewrap else WORKER_DIR
    return [sys.executable, "-I", "-B", os.path.join(folder, script), *args]


@functools.lru_cache(maxsize=None)
def bubblewrap_sizes_tmpfs() -> bool:
    """Whether this bwrap knows ``--size`` (0.8 and later): a size-capped tmpfs."""
    try:
        text = subprocess.run(["bwrap", "--version"], capture_output=True, text=True, timeout=20).stdout
        version = tuple(int(part) for part in text.split()[-1].split(".")[:2])
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
        return False
    return version >= (0, 8)


def bubblewrap_command(binds: list[tuple[str, str]], command: list[str],
                       tmp_bytes: int | None = None) -> list[str]:
    """``command`` in a bwrap sandbox that sees the runtime read-only, a private /tmp (a
    tmpfs of at most ``tmp_bytes`` where bwrap can cap it; its pages are charged to the
    cgroup's memory in any case), and ``binds`` (source, destination) read-only; nothing
    else of the machine. The kernel's list of keys (/proc/keys) is hidden too."""
    # Order matters: bwrap mounts in argument order, so /tmp comes before binds that may
    # live under it (a virtualenv in /tmp would otherwise be hidden by the tmpfs).
    size = ["--size", str(tmp_bytes)] if tmp_bytes and bubblewrap_sizes_tmpfs() else []
    cmd = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
           "--uid", "65534", "--gid", "65534", "--proc", "/proc", "--dev", "/dev",
           "--ro-bind", "/dev/null", "/proc/keys", "--ro-bind", "/dev/null", "/proc/key-users",
           *size, "--tmpfs", "/tmp", "--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            cmd += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            cmd += ["--ro-bind", top, top]
    for d in runtime_dirs():
        cmd += ["--ro-bind", d, d]
    if os.path.isfile("/etc/ld.so.cache"):  # how ctypes finds system libraries (libseccomp)
        cmd += ["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    cmd += ["--ro-bind", WORKER_DIR, WORKER_DIR_INSIDE]
    for source, destination in binds:
        cmd += ["--ro-bind", source, destination]
    cmd += ["--chdir", "/tmp", "--clearenv"]
    for key, value in worker_env().items():
        cmd += ["--setenv", key, value]
    return cmd + ["--"] + command


def landlock_policy(read: list[str], write: list[str], inside_bubblewrap: bool = False) -> dict:
    """What a process restricted by Landlock may still touch: the runtime and ``read``;
    writing only ``write`` (and /dev/null)."""
    worker = WORKER_DIR_INSIDE if inside_bubblewrap else WORKER_DIR
    runtime = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/dev/urandom",
               worker] + runtime_dirs()
    return {"read": runtime + list(read), "write": list(write) + ["/dev/null"]}


@functools.lru_cache(maxsize=None)
def private_namespaces_work(tier: str) -> bool:
    """Whether a worker can enter user, IPC and network namespaces of its own in this tier
    (namespaces.py; user namespaces may be disabled, or not nest inside bwrap's)."""
    inside = tier == BUBBLEWRAP
    probe = python_command("namespaces.py", inside_bubblewrap=inside)
    cmd = bubblewrap_command([], probe) if inside else probe
    return _succeeds(cmd, env={} if inside else worker_env())


@functools.lru_cache(maxsize=None)
def private_scratch_works() -> bool:
    """Whether a process outside bwrap can mount a capped tmpfs over its scratch folder in
    user and mount namespaces of its own (namespaces.py; not as root in most containers)."""
    probe = python_command("namespaces.py", "--mount", inside_bubblewrap=False)
    return sys.platform.startswith("linux") and _succeeds(probe, env=worker_env())


@functools.lru_cache(maxsize=None)
def syscall_filter_works() -> bool:
    """Whether a worker can forbid itself system calls here (syscalls.py: new sockets,
    the kernel's keyrings)."""
    return syscalls.available()
