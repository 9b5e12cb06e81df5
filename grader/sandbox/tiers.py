"""Isolation tiers: which one works here, and how a sandboxed process is started in each.

``bubblewrap``: every namespace unshared, only the runtime and the submission visible.
``landlock``: where bwrap fails, the process restricts itself before any student code runs.
``unprivileged``: where neither works but the grader is root (Gradescope's containers:
Docker's seccomp profile forbids namespaces, old kernels lack Landlock), the worker runs
as a user of its own (a uid no other process has), so file permissions keep it from the
task, the results and the grader, with the limits, cgroup and system-call filter.
``rlimits``: resource limits only (a student checking their own file).

``auto`` takes the strongest tier that works, and says so whenever that is not bubblewrap.
Grading someone else's work (a batch, Gradescope, CI with hidden checks) never runs in
``rlimits``, where the submission could read the task or rewrite the results.
"""
from __future__ import annotations

import functools
import importlib.util
import os
import shlex
import shutil
import stat
import subprocess
import sys

from . import landlock, syscalls

BUBBLEWRAP, LANDLOCK, UNPRIVILEGED, RLIMITS = "bubblewrap", "landlock", "unprivileged", "rlimits"
TIERS = (BUBBLEWRAP, LANDLOCK, UNPRIVILEGED, RLIMITS)      # strongest first
# A worker of the unprivileged tier runs as WORKER_UID_BASE + its pid: no other live
# process has that uid (no classmate's worker to signal, trace or read), and no file does.
WORKER_UID_BASE = 1_500_000_000
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


@functools.lru_cache(maxsize=None)
def unprivileged_works() -> bool:
    """Whether the grader is root and a process it starts as a user of its own can run the
    worker's Python and import numpy (their folders must be readable by every user)."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        return False
    probe = [sys.executable, "-I", "-B", "-c", "import numpy, sys; sys.path.insert(0, sys.argv[1]); "
             "import wire", WORKER_DIR]
    try:
        done = subprocess.run(probe, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, env=worker_env(), cwd="/", timeout=60,
                              preexec_fn=lambda: become_user(WORKER_UID_BASE + os.getpid()))
    except (OSError, subprocess.TimeoutExpired, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def become_user(uid: int) -> None:
    """Give up root for good: no supplementary groups, real, effective and saved ids all
    ``uid`` (capabilities go with them)."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def open_to_other_users(path: str, write: bool = False) -> bool:
    """Whether a user with no claim on ``path`` (not its owner, not in its group: a worker
    of the unprivileged tier) could read it (a file, or a folder's files), or with
    ``write`` create files in it; paths that do not exist are closed."""
    path = os.path.abspath(path)
    try:
        mode = os.stat(path).st_mode
        parents = [os.stat(p).st_mode for p in _ancestors(path)]
    except OSError:
        return False
    if not all(m & stat.S_IXOTH for m in parents):
        return False
    if stat.S_ISDIR(mode):
        return bool(mode & stat.S_IXOTH) and (not write or bool(mode & stat.S_IWOTH))
    return bool(mode & (stat.S_IWOTH if write else stat.S_IROTH))


def _ancestors(path: str) -> list[str]:
    found = []
    while True:
        parent = os.path.dirname(path)
        if parent == path:
            return found
        found.append(parent)
        path = parent


def refuse_open_paths(secret: list[str], written: list[str] = ()) -> None:
    """In the unprivileged tier, file permissions are the walls: refuse to grade when what
    the worker must not read (the task, the cache, classmates) or write (the results) is
    open to every user, with the command that closes it."""
    exposed = [p for p in secret if _any_open(p)]
    exposed += [p for p in written if open_to_other_users(p, write=True)]
    if exposed:
        shown = " ".join(shlex.quote(p) for p in exposed)
        raise SandboxUnavailable(
            f"in the unprivileged tier a submission runs as a user of its own and could read "
            f"or write what every user may: {', '.join(exposed)}. Close them first: "
            f"chmod -R o-rwx {shown}")


def _any_open(path: str) -> bool:
    if open_to_other_users(path):
        if not os.path.isdir(path):
            return True
        for root, dirs, files in os.walk(path):
            if any(open_to_other_users(os.path.join(root, name)) for name in files):
                return True
    return False


@functools.lru_cache(maxsize=None)
def why_not_bubblewrap() -> str:
    """Why bubblewrap does not work here and how to fix it (userns.py); asked once per
    process (it runs bwrap), since every report below bubblewrap says it."""
    from .userns import why_bubblewrap_fails
    return why_bubblewrap_fails().rstrip(".")


def choose_tier(requested: str = "auto", others_work: bool = False) -> str:
    """``auto`` takes the strongest tier that works here; naming a tier refuses to degrade.
    ``others_work``: the submission is someone else's (a batch, Gradescope, CI with hidden
    checks): the rlimits tier, in which it could read the task and write the results, is
    refused rather than taken."""
    if requested == RLIMITS and others_work:
        raise SandboxUnavailable(_NO_RLIMITS + "; drop --isolation rlimits.")
    if requested == RLIMITS:
        return RLIMITS
    if requested == UNPRIVILEGED and unprivileged_works():
        return UNPRIVILEGED
    if requested in ("auto", BUBBLEWRAP) and bubblewrap_works():
        return BUBBLEWRAP
    if requested == BUBBLEWRAP:
        raise SandboxUnavailable(
            f"the bubblewrap sandbox was required but does not work on this machine: "
            f"{why_not_bubblewrap()}. Or run with --isolation auto to grade in the strongest "
            f"tier that works here.")
    if requested in ("auto", LANDLOCK) and landlock_works():
        return LANDLOCK
    if requested == LANDLOCK:
        raise SandboxUnavailable("the landlock tier was required but this kernel has no "
                                 "Landlock (Linux 5.13 or newer with Landlock enabled).")
    if requested == "auto" and unprivileged_works():
        return UNPRIVILEGED
    if requested == UNPRIVILEGED:
        raise SandboxUnavailable(
            "the unprivileged tier was required but does not work here: it needs the grader "
            "to run as root, and its Python and packages readable by every user.")
    if others_work:
        raise SandboxUnavailable(
            f"no tier that protects the task and the results works here ({why_not_bubblewrap()}; "
            f"no Landlock; not root, so workers cannot run as a user of their own). "
            f"{_NO_RLIMITS}.")
    return RLIMITS


_NO_RLIMITS = ("grading someone else's work is refused in the rlimits tier, where the "
               "submission could read the task and its reference and rewrite the results")


def downgrade_note(tier: str) -> str:
    """What is weaker about ``tier`` than bubblewrap, and why bubblewrap was not used
    (empty for bubblewrap itself); said on stderr and in the report."""
    if tier == BUBBLEWRAP:
        return ""
    what = {LANDLOCK: "landlock tier (file access confined by Landlock; no private /proc)",
            UNPRIVILEGED: "unprivileged tier (the worker runs as a user of its own; it sees "
                          "every file that every user may read)",
            RLIMITS: "rlimits tier (resource limits only: the submission can read and write "
                     "what the grader can)"}[tier]
    why = "it was asked for (--isolation)" if bubblewrap_works() else why_not_bubblewrap()
    return f"graded in the {what}, not bubblewrap: {why}"


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
