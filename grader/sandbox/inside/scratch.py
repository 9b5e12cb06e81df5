"""A worker's scratch folder: how much of it is used, and removing it whatever the worker
did to it (a folder it made unlistable, mode 0300, survives ``shutil.rmtree``).

Standard library only: the fork server uses it inside the sandbox, the grader outside.
"""

from __future__ import annotations

import os
import shutil
import stat


def remove(folder: str) -> bool:
    """Give back to every folder below ``folder`` the owner's rights (the worker may have
    taken them away), then remove it all. True if it is gone."""
    pending = [folder]
    while pending:
        path = pending.pop()
        try:
            os.chmod(path, stat.S_IRWXU, follow_symlinks=False)
            with os.scandir(path) as entries:
                pending.extend(e.path for e in entries if e.is_dir(follow_symlinks=False))
        except (OSError, NotImplementedError):  # (Windows: no chmod of a link itself)
            continue
    shutil.rmtree(folder, ignore_errors=True)
    return not os.path.lexists(folder)


def usage(path: str) -> dict:
    """Bytes and inodes in use on the filesystem that holds ``path``."""
    st = os.statvfs(path)
    return {"bytes": (st.f_blocks - st.f_bfree) * st.f_frsize, "inodes": st.f_files - st.f_ffree}
