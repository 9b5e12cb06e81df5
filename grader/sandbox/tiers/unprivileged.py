"""The unprivileged tier: where neither bwrap nor Landlock works but the grader is root
(Gradescope's containers: Docker's seccomp profile forbids namespaces, old kernels lack
Landlock), the worker runs as a user of its own (a uid no other process has), so file
permissions keep it from the task, the results and the grader, with the limits, cgroup and
system-call filter.

With no namespace of its own, what a worker could leave for the next is closed or cleared:
the places every user may write are closed to the one group every worker holds
(shared_places.py); its own folder lies in a folder only its user may pass through; it may
make no IPC object (syscalls.py); without a cgroup it may start no process, and at its end
every process of its user is killed (user_processes.py) and what it owns in the folders that
could not be closed is removed."""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import shlex
import stat
import subprocess
import sys
import sysconfig
from collections.abc import Sequence

from grader.records.limits import Limits
from grader.sandbox import shared_places, user_processes
from grader.sandbox.inside import protocol
from grader.sandbox.tiers.base import (
    WORKER_DIR,
    SandboxUnavailable,
    Start,
    Tier,
    die_with_parent,
    no_filter_gaps,
    sandbox_missing,
    syscall_filter_works,
    worker_env,
)

# A worker of this tier runs as WORKER_UID_BASE + its pid: no other live process has that
# uid (no classmate's worker to signal, trace or read), and no file does.
WORKER_UID_BASE = 1_500_000_000
# The one supplementary group of every worker of this tier, and of no other process: the
# places every user may write carry an ACL entry that shuts it out.
SHUT_OUT_GID = WORKER_UID_BASE - 1
OWN_FOLDER = "own"  # the worker's folder, inside the one the grader made for it
NOT_ROOT = "not root, so workers cannot run as a user of their own"


class Unprivileged(Tier):
    name = "unprivileged"
    weakness = (
        "the worker runs as a user of its own; it sees every file that every user may read, "
        "and the other processes of the machine"
    )
    file_permissions_are_walls = True

    def works(self) -> bool:
        return not sandbox_missing() and unprivileged_works()

    def missing(self) -> str:
        return (
            sandbox_missing() or why_unprivileged_fails() or "workers cannot run as a user of their own here"
        )

    def refusal(self) -> str:
        if sandbox_missing():
            return f"the unprivileged tier was required but {sandbox_missing()}."
        why = why_unprivileged_fails()
        if why is None or why == NOT_ROOT:
            return (
                "the unprivileged tier was required but does not work here: it needs the grader "
                "to run as root, and its Python and packages readable by every user."
            )
        return f"the unprivileged tier was required but does not work here: {why}."

    def gaps(self) -> list[str]:
        gaps = no_filter_gaps(ipc=True)
        still_open = shared_places.closed_to(SHUT_OUT_GID).open
        if still_open:
            shown = ", ".join(still_open[:5]) + (
                f" and {len(still_open) - 5} more" if len(still_open) > 5 else ""
            )
            gaps.append(
                f"files that every user may write could not be closed to workers (their "
                f"filesystem has no ACLs): {shown}"
            )
        return gaps

    def described_weakness(self) -> str:
        swept = shared_places.closed_to(SHUT_OUT_GID).swept
        if not swept:
            return self.weakness
        return (
            f"{self.weakness}; {', '.join(swept)} could not be closed to workers (no ACLs there): "
            f"what a worker leaves there is removed after it, but two workers running at the "
            f"same time could share it"
        )

    def worker(self, channel: int, limits: Limits, folder: str, in_cgroup: bool) -> Start:
        shared_places.closed_to(SHUT_OUT_GID)  # before the first worker of this process
        own = os.path.join(folder, OWN_FOLDER)
        os.mkdir(own, 0o700)
        command = self.python(
            "worker.py",
            str(channel),
            json.dumps({**self.confinement(limits, own, in_cgroup), "preload": list(limits.preload)}),
        )
        return Start(command, dict(worker_env(), HOME=own, TMPDIR=own), own, own)

    def confinement(self, limits: Limits, folder: str, in_cgroup: bool) -> protocol.Confinement:
        # File permissions are its walls (the user is set in enter); no new sockets either
        # (the machine's network and named sockets), no IPC objects (no IPC namespace), and
        # without a cgroup no new processes.
        filters = syscall_filter_works()
        return {
            "deny_sockets": filters,
            "deny_keys": filters,
            "deny_ipc": filters,
            "deny_processes": filters and not in_cgroup,
        }

    def started(self, pid: int, folder: str) -> None:
        # Its folder is its own (it writes nothing before it is asked), inside one that only
        # its user may pass through: a worker running at the same time cannot reach it,
        # whatever its owner makes of its mode.
        uid = WORKER_UID_BASE + pid
        os.chown(os.path.join(folder, OWN_FOLDER), uid, uid)
        os.chown(folder, 0, uid)
        os.chmod(folder, stat.S_IRWXU | stat.S_IXGRP)

    def enter(self) -> None:
        become_user(WORKER_UID_BASE + os.getpid())
        die_with_parent()  # after become_user: a change of user clears the parent-death signal

    def cpu_seconds(self, pid: int) -> float:
        if syscall_filter_works():  # it could start no process: its own time is all of it
            return super().cpu_seconds(pid)
        return user_processes.cpu_seconds(WORKER_UID_BASE + pid)

    def ended(self, pid: int, folder: str) -> None:
        uid = WORKER_UID_BASE + pid
        user_processes.kill_all(uid)
        shared_places.sweep(shared_places.closed_to(SHUT_OUT_GID).swept, uid)


def unprivileged_works() -> bool:
    """Whether the grader is root and a process it starts as a user of its own can run the
    worker's Python and import numpy (their folders must be readable by every user)."""
    return why_unprivileged_fails() is None


@functools.cache
def why_unprivileged_fails() -> str | None:
    """Why this tier does not work here, with the fix (None: it works). As root, what a
    worker's user could not reach is named: the folders closed to other users on the way to
    the grader's Python and packages, else what the probe said."""
    if not sys.platform.startswith("linux"):
        return "not Linux, so workers cannot run as a user of their own"
    if not _is_root():
        return NOT_ROOT
    failure = _probe_failure()
    if failure is None:
        return None
    closed = list(dict.fromkeys(c for c in map(closed_to_other_users, _worker_needs()) if c))
    cause = (
        f"{', '.join(closed)} {'is' if len(closed) == 1 else 'are'} closed to other users (the probe: {failure})"
        if closed
        else failure
    )
    return (
        f"the grader runs as root, but a worker running as a user of its own cannot run its "
        f"Python and import numpy: {cause}. Install the grader where every user can read it (a "
        f"virtualenv under /opt, say), or make its Python and packages readable by every user "
        f"(o+rx on each closed folder, o+r on their files)"
    )


def _is_root() -> bool:
    return os.geteuid() == 0


def _probe_failure() -> str | None:
    """Run the worker's Python as a user of its own, importing numpy and the worker's
    modules: None if it could, else what went wrong, in one line."""
    probe = [
        sys.executable,
        "-I",
        "-B",
        "-c",
        "import numpy, sys; sys.path.insert(0, sys.argv[1]); import wire",
        WORKER_DIR,
    ]
    try:
        done = subprocess.run(
            probe,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=worker_env(),
            cwd="/",
            timeout=60,
            preexec_fn=lambda: become_user(WORKER_UID_BASE + os.getpid()),
        )
    except subprocess.TimeoutExpired:
        return "the probe did not finish in 60 s"
    except OSError as exc:
        return f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc)
    except subprocess.SubprocessError as exc:
        return str(exc)[:300]
    if done.returncode == 0:
        return None
    said = [text for text in done.stderr.decode(errors="replace").splitlines() if text.strip()]
    return said[-1].strip()[:300] if said else f"the probe exited with status {done.returncode}"


def _worker_needs() -> list[str]:
    """What a worker's user must read: the grader's Python (where its links lead), the
    standard library, the packages, numpy and the worker's own modules."""
    needs = [sys.executable, sysconfig.get_path("stdlib"), sysconfig.get_path("purelib"), WORKER_DIR]
    numpy = importlib.util.find_spec("numpy")
    if numpy is not None and numpy.submodule_search_locations:
        needs.append(list(numpy.submodule_search_locations)[0])
    return [os.path.realpath(p) for p in needs if p]


def closed_to_other_users(path: str) -> str | None:
    """The first place on the way to ``path`` (a folder on the way, or itself) that a user
    with no claim on it cannot pass or read (a folder: list); None if it is open."""
    path = os.path.abspath(path)
    for step in [*reversed(_ancestors(path)), path]:
        if not open_to_other_users(step):
            return step
    try:
        listable = not os.path.isdir(path) or bool(os.stat(path).st_mode & stat.S_IROTH)
    except OSError:
        return path
    return None if listable else path


def become_user(uid: int) -> None:
    """Give up root for good: real, effective and saved ids all ``uid`` (capabilities go
    with them), and no supplementary group but the one shut out of shared places."""
    os.setgroups([SHUT_OUT_GID])
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
    found: list[str] = []
    while True:
        parent = os.path.dirname(path)
        if parent == path:
            return found
        found.append(parent)
        path = parent


def refuse_open_paths(
    secret: Sequence[str], written: Sequence[str] = (), entered: Sequence[str] = ()
) -> None:
    """Where file permissions are the walls: refuse to grade when what the worker must not
    read (the task, the cache, classmates) or write (the results) is open to every user,
    with the command that closes it. ``entered``: folders no other user may even pass
    into (a database's: what is made in them later is closed whatever its mode)."""
    exposed = [p for p in entered if open_to_other_users(p)]
    exposed += [p for p in secret if _any_open(p)]
    exposed += [p for p in written if open_to_other_users(p, write=True)]
    if exposed:
        shown = " ".join(shlex.quote(p) for p in exposed)
        raise SandboxUnavailable(
            f"in the unprivileged tier a submission runs as a user of its own and could read "
            f"or write what every user may: {', '.join(exposed)}. Close them first: "
            f"chmod -R o-rwx {shown}"
        )


def _any_open(path: str) -> bool:
    if open_to_other_users(path):
        if not os.path.isdir(path):
            return True
        for root, _dirs, files in os.walk(path):
            if any(open_to_other_users(os.path.join(root, name)) for name in files):
                return True
    return False
