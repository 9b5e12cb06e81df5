"""Why bubblewrap does not work here, in words an instructor can act on.

bwrap needs unprivileged user namespaces. The usual reasons it fails, each with its fix:

- it is not installed;
- Ubuntu 23.10 and later (GitHub's ubuntu-24.04 runners included) let AppArmor confine
  every unprivileged user namespace (kernel.apparmor_restrict_unprivileged_userns = 1),
  so bwrap dies with "setting up uid map: Permission denied";
- Debian's kernel.unprivileged_userns_clone = 0, or user.max_user_namespaces = 0;
- a container whose seccomp profile refuses them (Docker's default).

Read only on the way to a refusal (``--require-sandbox``, ``--isolation bubblewrap``),
so the probe's cost never lands on a grading run that works.
"""

from __future__ import annotations

import os
import shutil
import subprocess

SYSCTL = "/proc/sys"
APPARMOR_SYSCTL = "kernel.apparmor_restrict_unprivileged_userns"
RELAX_APPARMOR = f"sudo sysctl -w {APPARMOR_SYSCTL}=0"


def _sysctl(name: str, root: str) -> str | None:
    try:
        with open(os.path.join(root, *name.split(".")), encoding="ascii") as f:
            return f.read().strip()
    except (OSError, ValueError):
        return None


def _bwrap_says(bwrap: str) -> str:
    """bwrap's own complaint when it tries the namespaces the sandbox uses (one line)."""
    try:
        done = subprocess.run(
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
            ],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=20,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{type(exc).__name__}: {exc}"
    lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1][:300] if lines else f"exit status {done.returncode}"


def why_bubblewrap_fails(sysctl_root: str | None = None, bwrap: str | None = None) -> str:
    """The reason and the fix, as one or two sentences ending with a full stop."""
    sysctl_root = sysctl_root or SYSCTL
    bwrap = bwrap or shutil.which("bwrap")
    if not bwrap:
        return (
            "bwrap is not installed. Install it (Debian/Ubuntu: apt-get install bubblewrap; "
            "Fedora: dnf install bubblewrap)."
        )
    if _sysctl(APPARMOR_SYSCTL, sysctl_root) == "1":
        return (
            f"AppArmor restricts unprivileged user namespaces here ({APPARMOR_SYSCTL} = 1, "
            "as on Ubuntu 24.04 and GitHub's ubuntu-24.04 runners), so bwrap cannot make "
            f"its sandbox. Relax it (on a CI runner, for the job: {RELAX_APPARMOR}) or load "
            "an AppArmor profile that allows bwrap user namespaces (see docs/operators.md: GitHub's runners)."
        )
    said = _bwrap_says(bwrap)
    fixes = []
    if _sysctl("kernel.unprivileged_userns_clone", sysctl_root) == "0":
        fixes.append("sudo sysctl -w kernel.unprivileged_userns_clone=1")
    if _sysctl("user.max_user_namespaces", sysctl_root) == "0":
        fixes.append("sudo sysctl -w user.max_user_namespaces=10000")
    how = (
        f"allow them ({'; '.join(fixes)})"
        if fixes
        else "allow them (in a container, Docker's default seccomp profile refuses them; with "
        f"AppArmor, {RELAX_APPARMOR})"
    )
    return f"bwrap cannot create user namespaces here (bwrap said: {said}). {how[0].upper()}{how[1:]}."
