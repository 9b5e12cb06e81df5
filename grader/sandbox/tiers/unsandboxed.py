"""The unsandboxed tier: a student's own machine (macOS, Windows, or a Linux where no tier
works), for a kit only. The worker is a plain subprocess of the student's own Python, with no
confinement beyond what the system offers: rlimits where it has them (set by the worker on
itself), a per-call limit and the submission's budget enforced from the grader's side by
killing it, its output capped as everywhere.

It is the weakest tier and the only one that is never taken for anything but a kit (a task
without a reference or hidden checks) checked by its own student: ``kit_only`` (choose_tier
takes it only when the caller says the grade is such a kit, and never for someone else's
work, whatever was asked for). Nothing of the instructor's is on the machine to protect, and
the student's own work is all the submission could reach: what it does there is between
the student and their own files. Their instructor grades in a sandbox.
"""

from __future__ import annotations

import json
import os
import sys

from grader.records.limits import Limits
from grader.records.result import UNSANDBOXED
from grader.sandbox.inside import protocol
from grader.sandbox.tiers.base import FRAMEWORK_ENV, Start, Tier, sandbox_missing

# The worker's own script (it connects back to the grader, then is an ordinary worker).
SCRIPT = "connect_back.py"


class Unsandboxed(Tier):
    name = UNSANDBOXED
    weakness = "no sandbox: the submission runs as you, on your own machine, with your files"
    unsafe_for_others_work = (
        "grading someone else's work is refused in the unsandboxed tier, where the "
        "submission runs as the grader with nothing between them"
    )
    kit_only = True
    plain_process = True

    def works(self) -> bool:
        return True  # a plain subprocess of this Python: wherever the grader runs

    def missing(self) -> str:
        return "nothing"

    def refusal(self) -> str:
        return "the unsandboxed tier always works"

    def downgrade(self, strongest: str, why: str) -> str:
        return (
            "graded unsandboxed: your own machine; your instructor grades in the sandbox "
            f"(none works here: {sandbox_missing() or why})"
        )

    def worker(self, channel: int, limits: Limits, folder: str, in_cgroup: bool) -> Start:
        """``channel``: the loopback port the worker connects back to (plain_worker.py)."""
        config: protocol.UnsandboxedConfig = {
            "limits": {
                "memory_mib": limits.memory_mib,
                "file_mib": limits.file_mib,
                "open_files": limits.open_files,
                "processes": limits.processes,
                "submission_seconds": limits.submission_seconds,
            },
            "preload": list(limits.preload),
        }
        # Not -I: the student's own Python as they run it (their user site, their PYTHONPATH),
        # so the worker finds numpy where the grader did.
        command = [
            sys.executable,
            "-B",
            os.path.join(self.worker_dir, SCRIPT),
            str(channel),
            json.dumps(config),
        ]
        return Start(command, home_env(folder), folder, folder)

    def confinement(self, limits: Limits, folder: str, in_cgroup: bool) -> protocol.Confinement:
        return {}  # none: see the module's docstring


def home_env(folder: str) -> dict[str, str]:
    """The student's own environment (what their Python needs to start at all: Windows'
    SYSTEMROOT, their PATH), with the worker's temporary folder its own and the settings every
    worker has: one BLAS thread, a fixed hash seed, the frameworks' quiet start, and UTF-8
    output (what the grader reads it as; Windows would write its code page)."""
    env = dict(os.environ)
    env.update(
        {
            "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
            "PYTHONHASHSEED": "0",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONIOENCODING": "utf-8",
            "TMPDIR": folder,
            "TEMP": folder,
            "TMP": folder,
        }
    )
    env.update(FRAMEWORK_ENV)
    return env
