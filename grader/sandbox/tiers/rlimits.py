"""The rlimits tier: resource limits and a cleared environment only, for a student checking
their own file (the submission can read and write what the grader can). Linux only, as every
sandboxed tier (base.sandbox_missing): elsewhere a kit is graded unsandboxed."""

from __future__ import annotations

from grader.records.limits import Limits
from grader.sandbox.inside import protocol
from grader.sandbox.tiers.base import Tier, sandbox_missing, syscall_filter_works


class Rlimits(Tier):
    name = "rlimits"
    weakness = "resource limits only: the submission can read and write what the grader can"
    unsafe_for_others_work = (
        "grading someone else's work is refused in the rlimits tier, where "
        "the submission could read the task and its reference and rewrite "
        "the results"
    )

    def works(self) -> bool:
        return not sandbox_missing()

    def missing(self) -> str:
        return sandbox_missing() or "nothing"

    def refusal(self) -> str:
        return f"the rlimits tier was required but {sandbox_missing() or 'it works here'}."

    def confinement(self, limits: Limits, folder: str, in_cgroup: bool) -> protocol.Confinement:
        # The network is kept by design; no key system calls, as in every tier; no IPC
        # objects (no IPC namespace here), and no new processes without a cgroup.
        filters = syscall_filter_works()
        return {"deny_keys": filters, "deny_ipc": filters, "deny_processes": filters and not in_cgroup}
