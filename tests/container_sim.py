"""Run a command as Gradescope's containers would: root, with Docker's default seccomp
profile, which forbids the system calls that make namespaces (so bubblewrap cannot work)
and, in the Docker versions Gradescope runs, knows nothing of Landlock's.

    python container_sim.py COMMAND [ARG...]

The filter is inherited by everything COMMAND starts, the grader's workers included.
"""
import errno
import os
import sys

import pyseccomp as seccomp

CLONE_NAMESPACES = (0x10000000,  # CLONE_NEWUSER
                    0x00020000,  # CLONE_NEWNS
                    0x20000000,  # CLONE_NEWPID
                    0x40000000,  # CLONE_NEWNET
                    0x08000000,  # CLONE_NEWIPC
                    0x04000000,  # CLONE_NEWUTS
                    0x02000000)  # CLONE_NEWCGROUP


def docker_default_profile() -> None:
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in ("unshare", "setns", "mount", "umount2", "pivot_root"):
        rules.add_rule(seccomp.ERRNO(errno.EPERM), name)
    for flag in CLONE_NAMESPACES:
        rules.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    # clone3's flags sit in memory a filter cannot read: Docker answers ENOSYS, and the C
    # library falls back to clone.
    for name in ("clone3", "landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self"):
        rules.add_rule(seccomp.ERRNO(errno.ENOSYS), name)
    rules.load()


if __name__ == "__main__":
    docker_default_profile()
    os.execvp(sys.argv[1], sys.argv[1:])
