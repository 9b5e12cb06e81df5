"""Run a command as Gradescope's containers would: root, with Docker's default seccomp
profile, which forbids the system calls that make namespaces (so bubblewrap cannot work)
and, in the Docker versions Gradescope runs, knows nothing of Landlock's.

    python container_sim.py [--no-cgroup] [--landlock] [--mqueue FOLDER] COMMAND [ARG...]

``--no-cgroup``: also as Docker mounts the cgroup filesystems by default, read-only, so the
grader can make no cgroup of its own (done in a mount namespace of the simulation's own,
before the profile forbids mounts; the machine's mounts are untouched).
``--landlock``: a newer Docker, whose profile lets Landlock through (still no namespaces):
root in a container where the landlock tier works without user namespaces.
``--mqueue FOLDER``: the POSIX message queues' filesystem mounted on FOLDER (an empty folder
every user may write), as Docker mounts one on /dev/mqueue: a place every user may write
that takes no ACL (in the simulation's mount namespace; the queues are the machine's).

The filter is inherited by everything COMMAND starts, the grader's workers included.
"""

import ctypes
import errno
import os
import sys

import pyseccomp as seccomp

CLONE_NAMESPACES = (
    0x10000000,  # CLONE_NEWUSER
    0x00020000,  # CLONE_NEWNS
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
    0x08000000,  # CLONE_NEWIPC
    0x04000000,  # CLONE_NEWUTS
    0x02000000,
)  # CLONE_NEWCGROUP
CGROUPS = "/sys/fs/cgroup"
MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 0x1, 0x20, 0x1000, 0x4000, 0x40000


def docker_default_profile(landlock: bool = False) -> None:
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in ("unshare", "setns", "mount", "umount2", "pivot_root"):
        rules.add_rule(seccomp.ERRNO(errno.EPERM), name)
    for flag in CLONE_NAMESPACES:
        rules.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    # clone3's flags sit in memory a filter cannot read: Docker answers ENOSYS, and the C
    # library falls back to clone.
    landlock_calls = (
        () if landlock else ("landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self")
    )
    for name in ("clone3", *landlock_calls):
        rules.add_rule(seccomp.ERRNO(errno.ENOSYS), name)
    rules.load()


def _check(result: int, what: str) -> None:
    if result != 0:
        raise OSError(ctypes.get_errno(), f"{what}: {os.strerror(ctypes.get_errno())}")


def own_mounts(read_only_cgroups: bool, mqueue: str | None) -> None:
    """A mount namespace of its own in which every cgroup filesystem is read-only, and/or
    a message-queue filesystem is mounted on ``mqueue``."""
    libc = ctypes.CDLL(None, use_errno=True)
    _check(libc.unshare(0x00020000), "unshare(CLONE_NEWNS)")
    _check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "making / private")
    if mqueue:
        _check(libc.mount(b"mqueue", mqueue.encode(), b"mqueue", 0, None), f"mounting mqueue on {mqueue}")
    if not read_only_cgroups:
        return
    with open("/proc/self/mountinfo") as f:
        points = [line.split()[4] for line in f]
    for point in sorted(p for p in points if p == CGROUPS or p.startswith(CGROUPS + "/")):
        _check(
            libc.mount(None, point.encode(), None, MS_REMOUNT | MS_BIND | MS_RDONLY, None),
            f"remounting {point} read-only",
        )


if __name__ == "__main__":
    args = sys.argv[1:]
    options: set[str] = set()
    mqueue = None
    while args and args[0] in ("--no-cgroup", "--landlock", "--mqueue"):
        options.add(args.pop(0))
        if "--mqueue" in options and mqueue is None:
            mqueue = args.pop(0)
    if "--no-cgroup" in options or mqueue:
        own_mounts("--no-cgroup" in options, mqueue)
    docker_default_profile(landlock="--landlock" in options)
    os.execvp(args[0], args)
