"""The bubblewrap tier: every namespace unshared, only the runtime and the inside modules
visible, a private /tmp, the environment cleared; the strongest tier."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys

from grader.records.limits import Limits
from grader.sandbox.inside import landlock as lsm
from grader.sandbox.inside import protocol
from grader.sandbox.tiers.base import (
    WORKER_DIR,
    Start,
    Tier,
    forks_confined_workers,
    private_namespaces_work,
    runtime_dirs,
    sandbox_missing,
    succeeds,
    syscall_filter_works,
    worker_env,
)
from grader.sandbox.userns import why_bubblewrap_fails

WORKER_DIR_INSIDE = "/opt/grader-worker"  # where bwrap shows WORKER_DIR
SCRATCH_INSIDE = "/tmp/workers"  # a fork server's workers' folders (bwrap's /tmp)
# A fresh worker's folder: where a fork server's first worker has its own, so that a file
# graded by `grader check` and by `grader batch` meets the same file system (one score).
FRESH_FOLDER = SCRATCH_INSIDE + "/w1"


class Bubblewrap(Tier):
    name = "bubblewrap"
    worker_dir = WORKER_DIR_INSIDE

    def works(self) -> bool:
        return not sandbox_missing() and bubblewrap_works()

    def missing(self) -> str:
        return sandbox_missing() or why_not_bubblewrap()

    def refusal(self) -> str:
        return (
            f"the bubblewrap sandbox was required but does not work on this machine: "
            f"{self.missing()}. Or run with --isolation auto to grade in the strongest "
            f"tier that works here."
        )

    def worker(self, channel: int, limits: Limits, folder: str, in_cgroup: bool) -> Start:
        # As a warm worker is (forkserver.py), so that a file meets the same walls whichever
        # command grades it: its own folder under /tmp/workers (cwd, HOME, TMPDIR), no new
        # socket, no key system calls (the kernel's keyrings outlive every namespace). Its
        # IPC and PID namespaces die with it, and its init reaps (and so counts) what ended.
        # Where the kernel has Landlock, it writes only its folder and its /proc is only its
        # own harmless entries (not its mem, not bwrap's init).
        filters = syscall_filter_works()
        confinement: protocol.Confinement = {
            "deny_sockets": filters,
            "deny_keys": filters,
            "preload": list(limits.preload),
        }
        if lsm.abi_version() >= 1:
            confinement["landlock"] = self.landlock_policy([], [FRESH_FOLDER])
        command = self.python("worker.py", str(channel), json.dumps(confinement))
        inside = bubblewrap_command([], command, tmp_bytes=limits.scratch_mib << 20, folder=FRESH_FOLDER)
        return Start(inside, {}, "/", FRESH_FOLDER)

    def enter(self) -> None:
        pass  # bwrap has --die-with-parent

    def exit_status(self, code: int) -> int:
        # bwrap reports its child's death by signal N as status 128+N
        return 128 - code if code > 128 else code

    def probe(self, script: str, *args: str) -> bool:
        return succeeds(bubblewrap_command([], self.python(script, *args)), env={})

    def warm_works(self) -> bool:
        return forks_confined_workers() and private_namespaces_work(self)

    def fork_server(self, channel: int, limits: Limits, config: protocol.ForkServerConfig) -> Start:
        # bwrap's /tmp is the capped tmpfs of the server's workers' folders.
        config = {
            **config,
            "scratch_root": SCRATCH_INSIDE,
            "scratch_bytes": None,
            "worker_landlock": self.landlock_policy([], []),
            "server_landlock": None,
        }
        command = self.python("forkserver.py", str(channel), json.dumps(config))
        return Start(
            bubblewrap_command([], command, tmp_bytes=limits.scratch_mib << 20), {}, "/", SCRATCH_INSIDE
        )


@functools.cache
def bubblewrap_works() -> bool:
    bwrap = shutil.which("bwrap")
    if not bwrap or not sys.platform.startswith("linux"):
        return False
    return succeeds(
        [
            bwrap,
            "--unshare-all",
            "--die-with-parent",
            "--ro-bind",
            "/",
            "/",
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "true",
        ]
    )


@functools.cache
def why_not_bubblewrap() -> str:
    """Why bubblewrap does not work here and how to fix it (userns.py); asked once per
    process (it runs bwrap), since every report below bubblewrap says it."""
    return why_bubblewrap_fails().rstrip(".")


@functools.cache
def bubblewrap_sizes_tmpfs() -> bool:
    """Whether this bwrap knows ``--size`` (0.8 and later): a size-capped tmpfs."""
    try:
        text = subprocess.run(["bwrap", "--version"], capture_output=True, text=True, timeout=20).stdout
        version = tuple(int(part) for part in text.split()[-1].split(".")[:2])
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
        return False
    return version >= (0, 8)


def bubblewrap_command(
    binds: list[tuple[str, str]], command: list[str], tmp_bytes: int | None = None, folder: str = "/tmp"
) -> list[str]:
    """``command`` in a bwrap sandbox that sees the runtime read-only, a private /tmp (a
    tmpfs of at most ``tmp_bytes`` where bwrap can cap it; its pages are charged to the
    cgroup's memory in any case), the inside modules, and ``binds`` (source, destination)
    read-only; nothing else of the machine. The kernel's list of keys (/proc/keys) is
    hidden too. It starts in ``folder`` (made in /tmp if need be), its HOME and TMPDIR."""
    # Order matters: bwrap mounts in argument order, so /tmp comes before binds that may
    # live under it (a virtualenv in /tmp would otherwise be hidden by the tmpfs).
    size = ["--size", str(tmp_bytes)] if tmp_bytes and bubblewrap_sizes_tmpfs() else []
    cmd = [
        "bwrap",
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--uid",
        "65534",
        "--gid",
        "65534",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--ro-bind",
        "/dev/null",
        "/proc/keys",
        "--ro-bind",
        "/dev/null",
        "/proc/key-users",
        *size,
        "--tmpfs",
        "/tmp",
        "--ro-bind",
        "/usr",
        "/usr",
    ]
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
    if folder != "/tmp":
        cmd += ["--dir", folder]
    cmd += ["--chdir", folder, "--clearenv"]
    for key, value in dict(worker_env(), HOME=folder, TMPDIR=folder).items():
        cmd += ["--setenv", key, value]
    return cmd + ["--"] + command
