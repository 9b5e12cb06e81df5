"""The landlock tier: where bwrap fails, the worker restricts itself before any student code
runs (Landlock: files and TCP; namespaces of its own, or no capability; no new socket)."""

from __future__ import annotations

import functools
import json
import os
import sys
import tempfile

from grader.records.limits import Limits
from grader.sandbox.inside import landlock as lsm
from grader.sandbox.inside import protocol
from grader.sandbox.tiers.base import (
    Start,
    Tier,
    forks_confined_workers,
    no_filter_gaps,
    private_namespaces_work,
    sandbox_missing,
    syscall_filter_works,
    worker_env,
)


class Landlock(Tier):
    name = "landlock"
    weakness = "file access confined by Landlock; no private /proc"

    def works(self) -> bool:
        return not sandbox_missing() and landlock_works()

    def missing(self) -> str:
        return sandbox_missing() or "no Landlock"

    def refusal(self) -> str:
        if sandbox_missing():
            return f"the landlock tier was required but {sandbox_missing()}."
        return (
            "the landlock tier was required but this kernel has no Landlock (Linux 5.13 "
            "or newer with Landlock enabled)."
        )

    def confinement(self, limits: Limits, folder: str, in_cgroup: bool) -> protocol.Confinement:
        # Namespaces of its own take every capability away (there is no bwrap here to drop
        # them when the grader runs as root); where there can be none, the capabilities are
        # dropped. No new sockets: the machine's named UNIX sockets are in reach here. Its
        # folder is a capped tmpfs of its own where a mount namespace can be had, else (say,
        # root in a container) a folder on the machine's disk, capped only per file. Without
        # an IPC namespace of its own, no IPC objects; without a cgroup (and with no PID
        # namespace here in any case), no new processes.
        filters = syscall_filter_works()
        namespaces = private_namespaces_work(self)
        capped = namespaces and private_scratch_works(self)
        return {
            "landlock": self.landlock_policy([], [folder]),
            "private_namespaces": namespaces,
            "scratch": [folder, limits.scratch_mib << 20] if capped else None,
            "drop_capabilities": not namespaces and runs_as_root(),
            "deny_sockets": filters,
            "deny_keys": filters,
            "deny_ipc": filters and not namespaces,
            "deny_processes": filters and not in_cgroup,
        }

    def gaps(self) -> list[str]:
        # Files: Landlock lets a worker write only its own folder, removed after it.
        return no_filter_gaps(ipc=not private_namespaces_work(self))

    def warm_works(self) -> bool:
        return forks_confined_workers() and private_namespaces_work(self) and private_scratch_works(self)

    def fork_server(self, channel: int, limits: Limits, config: protocol.ForkServerConfig) -> Start:
        # The server mounts a capped tmpfs of its own over its scratch root before it
        # restricts itself (Landlock forbids mounts). It may write /proc so that its
        # workers can map their user namespace; each worker then confines itself further.
        root = tempfile.mkdtemp(prefix="grader-warm-")
        config = {
            **config,
            "scratch_root": root,
            "scratch_bytes": limits.scratch_mib << 20,
            "worker_landlock": self.landlock_policy([], []),
            "server_landlock": self.landlock_policy([], [root, "/proc"]),
        }
        command = self.python("forkserver.py", str(channel), json.dumps(config))
        return Start(command, dict(worker_env(), HOME=root, TMPDIR=root), root, root, host_folder=root)


@functools.cache
def landlock_works() -> bool:
    return lsm.abi_version() >= 1


@functools.cache
def private_scratch_works(tier: Tier) -> bool:
    """Whether a process outside bwrap can mount a capped tmpfs over its scratch folder in
    user and mount namespaces of its own (namespaces.py; not as root in most containers)."""
    return sys.platform.startswith("linux") and tier.probe("namespaces.py", "--mount")


def runs_as_root() -> bool:
    return os.getuid() == 0
