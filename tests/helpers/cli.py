"""The grader's command line as a user runs it, and what it leaves running."""

import os
import subprocess
import sys

from helpers.paths import ROOT


def run_cli(*args, env=None, timeout=120):
    """Run ``python -m grader`` as a user would; returns the CompletedProcess."""
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "grader", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=full_env,
        timeout=timeout,
    )


def no_process_with(marker: str) -> bool:
    """No live process on this machine has ``marker`` in its command line."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            return False
    return True
