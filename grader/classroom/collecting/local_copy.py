"""A student's repository named by a local path (``grader collect --repos-root DIR``): read
as what its student could hand in, not as whatever the grader's user can read.

git reads a local repository as the user who runs it and honours every redirection in it: a
path that is a link, a ``.git`` file (``gitdir:``), a linked worktree's ``commondir``,
``objects/info/alternates``, a link in ``refs/`` or as ``packed-refs``. A student could so
hand in the instructor's own course repository. So git never opens the student's path:

- ``where`` tells a local path from a network URL by git's own rules (``scheme://``,
  ``transport::address``, scp-like ``host:path`` only with no slash before the colon; the
  rest is a path), and refuses a value that starts with ``-``.
- ``copy_git_dir`` copies the repository's git directory into a private folder of the
  grader's, opening every entry relative to its folder's descriptor with ``O_NOFOLLOW``,
  from ``--repos-root`` down: no link is followed on the way or inside, and what is read is
  what was checked (no time-of-check gap). It copies only what a fetch reads (``HEAD``,
  ``packed-refs``, ``shallow``, ``objects/``, ``refs/``, ``reftable/``) and writes its own
  ``config``: no setting, hook or helper of the student's is honoured. It refuses a link, a
  FIFO, a device, a socket, another file system mounted inside, a hard link to another
  user's file, alternates, ``commondir`` and a ``.git`` file, and stops at ``ENTRIES``
  entries or ``BYTES`` bytes, so a huge or endless tree costs only its student.

The copy is then fetched as any repository is (bare_repo.Repository.fetch), with git's
ownership check as it is.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import stat
import tempfile
import urllib.parse
from dataclasses import dataclass

from grader.disk import create_private

# A short exercise's repository is a few MiB and a few thousand entries.
ENTRIES = 100_000
BYTES = 256 << 20
DEPTH = 32  # folders within the git directory (refs/heads/a/b/...)
CONFIG_BYTES = 64 << 10
# What a fetch reads of a git directory; the rest (config, hooks, index, logs, worktrees/)
# is not read at all.
COPIED = ("HEAD", "packed-refs", "shallow", "objects", "refs", "reftable")
REDIRECTIONS = {
    "objects/info/alternates": "objects/info/alternates (it lends the repository another's objects)",
    "objects/info/http-alternates": "objects/info/http-alternates (it lends the repository another's "
    "objects)",
}

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
_HELPER = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*::")
# (getattr: the module is imported, never used, where these do not exist: grader export on Windows)
_FOLDER = (
    os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
)
_FILE = (
    os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
)


@dataclass(frozen=True)
class Network:
    url: str


@dataclass(frozen=True)
class Local:
    path: str  # as given (a file:// URL's path, decoded as git decodes it)


@dataclass(frozen=True)
class Unusable:
    reason: str


def where(url: str) -> Network | Local | Unusable:
    """Whether git would take ``url`` for a network URL or a local path (git's
    transport_get and url_is_local_not_ssh), or why it is neither."""
    if url.startswith("-"):
        return Unusable(
            "it starts with '-', which git would take for an option: no repository is read "
            "from it (fix the roster)"
        )
    scheme = _SCHEME.match(url)
    if scheme:
        if scheme.group(1).lower() != "file":
            return Network(url)
        rest = urllib.parse.unquote(url[scheme.end() :])  # (git decodes %XX in a URL)
        slash = rest.find("/")  # (git ignores a file:// URL's host)
        if slash < 0:
            return Unusable("a file:// URL with no path")
        return Local(rest[slash:])
    if _HELPER.match(url):
        return Network(url)  # transport::address (GIT_ALLOW_PROTOCOL says which may run)
    colon, slash = url.find(":"), url.find("/")
    if colon >= 0 and (slash < 0 or colon < slash):
        return Network(url)  # host:path, scp-like ssh
    return Local(url)


class Refused(Exception):
    """The repository holds what is not read (a link, a redirection, too much): the
    message names the entry."""


class NotThere(Exception):
    """Nothing that can be read as a repository at that path."""


class _Budget:
    def __init__(self) -> None:
        self.entries = ENTRIES
        self.bytes = BYTES

    def entry(self) -> None:
        self.entries -= 1
        if self.entries < 0:
            raise Refused(f"it holds more than {ENTRIES} entries (a course repository holds far fewer)")

    def spend(self, size: int) -> None:
        self.bytes -= size
        if self.bytes < 0:
            raise Refused(f"it is larger than {BYTES >> 20} MiB (a course repository is far smaller)")


def inside(path: str, root: str) -> str | None:
    """``path`` (absolute, or relative to the current folder) relative to ``root`` once both
    are normalised, or None when it is not inside it. Links are not resolved: every
    component below the root is opened without following one."""
    full = os.path.abspath(path)
    for base in dict.fromkeys((os.path.abspath(root), os.path.realpath(root))):
        if full != base and os.path.commonpath((full, base)) == base:
            return os.path.relpath(full, base)
    return None


def copy_git_dir(path: str, root: str, into: str) -> str:
    """A private copy (in a new folder of ``into``) of the git directory of the repository
    at ``path``, which must be inside ``root``: its path, for git to fetch. Refused or
    NotThere, with the reason."""
    relative = inside(path, root)
    if relative is None:
        raise Refused(
            f"it is outside --repos-root {os.path.realpath(root)}: only repositories in that folder "
            "are read (a path elsewhere may be anyone's, the instructor's own included); put it "
            "there or fix the roster"
        )
    fds: list[int] = []
    copy = None
    try:
        fds.append(os.open(os.path.realpath(root), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC))
        parts = relative.split(os.sep)
        for i, name in enumerate(parts):
            if i == len(parts) - 1 and not _exists(fds[-1], name) and _exists(fds[-1], name + ".git"):
                name += ".git"  # (as git finds it)
            fds.append(_open_folder(fds[-1], name, "/".join(parts[: i + 1])))
        top = os.fstat(fds[-1])
        git_dir = fds[-1]
        try:
            dot_git = os.stat(".git", dir_fd=git_dir, follow_symlinks=False)
        except FileNotFoundError:
            pass  # a bare repository
        else:
            if stat.S_ISREG(dot_git.st_mode):
                raise Refused(
                    ".git is a file (gitdir: a repository elsewhere, perhaps anyone's): give the "
                    "repository itself"
                )
            fds.append(_open_folder(git_dir, ".git", ".git"))
            git_dir = fds[-1]
        if _exists(git_dir, "commondir"):
            raise Refused("it is a linked worktree (it holds commondir): give its main repository")
        if not all(_exists(git_dir, name) for name in ("HEAD", "objects", "refs")):
            raise NotThere("it does not appear to be a git repository (no HEAD, objects/ and refs/)")
        copy = tempfile.mkdtemp(prefix="local-", dir=into)
        target = os.path.join(copy, "repo.git")
        os.mkdir(target, 0o700)
        fds.append(os.open(target, _FOLDER))
        budget = _Budget()
        for name in COPIED:
            if _exists(git_dir, name):
                _copy_entry(git_dir, fds[-1], name, name, top, budget, 0)
        _write_config(git_dir, fds[-1])
        return target
    except BaseException as exc:
        if copy is not None:
            shutil.rmtree(copy, ignore_errors=True)
        if isinstance(exc, OSError):
            raise NotThere(f"it cannot be read ({exc.strerror or exc})") from None
        if isinstance(exc, ValueError):  # (a NUL in the path)
            raise NotThere(f"it is not a path ({exc})") from None
        raise
    finally:
        for fd in fds:
            os.close(fd)


def url_of(copy: str) -> str:
    """The copy as a URL git cannot take for anything else (a colon in a temporary folder's
    path would make it host:path)."""
    return "file://" + urllib.parse.quote(copy)


def remove(copy: str) -> None:
    shutil.rmtree(os.path.dirname(copy), ignore_errors=True)


# --------------------------------------------------------------------------- walking


def _exists(folder: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _what(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link (no link of a local repository is followed: it may name anyone's files)"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a folder" if stat.S_ISREG(mode) else "not a file or folder"


def _open_folder(parent: int, name: str, shown: str) -> int:
    """A folder below the root, never through a link."""
    try:
        st = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        raise NotThere(f"it does not appear to be a git repository: {shown} does not exist") from None
    if not stat.S_ISDIR(st.st_mode):
        raise Refused(f"{shown} is {_what(st.st_mode)}")
    try:
        return os.open(name, _FOLDER, dir_fd=parent)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise Refused(f"{shown} changed while it was read (into a link?)") from None
        raise


def _copy_entry(
    src: int, dst: int, name: str, shown: str, top: os.stat_result, budget: _Budget, depth: int
) -> None:
    budget.entry()
    if shown.lower() in REDIRECTIONS:  # (in any case: a disk may not tell them apart)
        raise Refused(f"it holds {REDIRECTIONS[shown.lower()]}: push the work itself")
    st = os.stat(name, dir_fd=src, follow_symlinks=False)
    if st.st_dev != top.st_dev and not stat.S_ISLNK(st.st_mode):
        raise Refused(f"{shown} is on another file system (a mount inside the repository)")
    if stat.S_ISDIR(st.st_mode):
        if depth >= DEPTH:
            raise Refused(f"{shown}: folders nested deeper than {DEPTH}")
        fd = _open_folder(src, name, shown)
        try:
            os.mkdir(name, 0o700, dir_fd=dst)
            out = os.open(name, _FOLDER, dir_fd=dst)
            try:
                with os.scandir(fd) as listing:
                    for entry in listing:
                        _copy_entry(fd, out, entry.name, f"{shown}/{entry.name}", top, budget, depth + 1)
            finally:
                os.close(out)
        finally:
            os.close(fd)
    elif stat.S_ISREG(st.st_mode):
        _copy_file(src, dst, name, shown, st, top, budget)
    else:
        raise Refused(f"{shown} is {_what(st.st_mode)}")


def _copy_file(
    src: int, dst: int, name: str, shown: str, st: os.stat_result, top: os.stat_result, budget: _Budget
) -> None:
    if st.st_nlink > 1 and st.st_uid != top.st_uid:
        # A hard link the student made to a file of another user's (the instructor's?).
        raise Refused(f"{shown} is a hard link to a file of another user's (uid {st.st_uid})")
    if st.st_size > budget.bytes:
        budget.spend(st.st_size)  # (refused before a byte is read)
    try:
        fd = os.open(name, _FILE, dir_fd=src)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Refused(f"{shown} changed while it was read (into a link)") from None
        raise
    try:
        now = os.fstat(fd)
        if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
            raise Refused(f"{shown} changed while it was read")
        with create_private(name, dir_fd=dst) as f:
            while chunk := os.read(fd, 1 << 20):
                budget.spend(len(chunk))
                f.write(chunk)
    finally:
        os.close(fd)


def _read_small(folder: int, name: str, cap: int) -> bytes | None:
    """A regular file's bytes (at most ``cap``), None when there is none."""
    try:
        fd = os.open(name, _FILE, dir_fd=folder)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Refused(f"{name} is {_what(stat.S_IFLNK)}") from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise Refused(f"{name} is {_what(os.fstat(fd).st_mode)}")
        data = os.read(fd, cap + 1)
    finally:
        os.close(fd)
    if len(data) > cap:
        raise Refused(f"{name} is larger than {cap >> 10} KiB")
    return data


_EXTENSION = re.compile(rb"^\s*(objectformat|refstorage)\s*=\s*([A-Za-z0-9]+)\s*$", re.I | re.M)


def _write_config(git_dir: int, out: int) -> None:
    """The copy's own config: of the student's, only how the repository is stored (its hash,
    its ref storage), which git must know to read it; nothing that runs or redirects."""
    student = _read_small(git_dir, "config", CONFIG_BYTES) or b""
    extensions = {k.decode().lower(): v.decode().lower() for k, v in _EXTENSION.findall(student)}
    lines = ["[core]", f"\trepositoryformatversion = {1 if extensions else 0}", "\tbare = true"]
    if extensions:
        lines += ["[extensions]", *(f"\t{key} = {value}" for key, value in sorted(extensions.items()))]
    with create_private("config", "w", dir_fd=out, encoding="ascii") as f:
        f.write("\n".join(lines) + "\n")
