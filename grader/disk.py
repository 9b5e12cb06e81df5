"""The grader's files on disk: the two ways it writes one, and its caches.

Every module that writes a file a reader must never see half of, or a file no one else may
read, does it here:

- ``write_whole(path)``: written aside (a new temporary beside it), then renamed over
  ``path``: a reader sees the old file or the new one, never half of one; a failure removes
  the temporary and passes on.
- ``create_private(path)``: a new file of ours, 0600 whatever the umask, never through a
  link and never over a file already there (O_EXCL | O_NOFOLLOW).
- ``swap_folder(fresh, target)``: a folder written whole beside its old self, then put in
  its place (a freeze, a kit, a collection).

The caches keep what only saves time (generated cases, reference times, specs found valid,
freezes found intact, shrink paths) under ``$GRADER_CACHE_DIR``, default ``~/.cache/grader``.
An entry is named by what its answer depends on, the grader's version and the libraries'
that change it included (``versions``, ``entry_name``), read tolerantly (a missing, damaged
or foreign entry is None: ``read_entry``) and written whole (``write_entry``). Nothing kept
here decides a grade: a missing or unwritable cache only costs time.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import secrets
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from typing import IO, Any, TypeVar

from grader import __version__

T = TypeVar("T")

# (Windows has no O_NOFOLLOW, O_CLOEXEC; only Windows has O_BINARY)
_NEW = (
    os.O_WRONLY
    | os.O_CREAT
    | os.O_EXCL
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
_READ = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)

# --------------------------------------------------------------------------- writing


@contextlib.contextmanager
def write_whole(
    path: str,
    mode: str = "wb",
    *,
    permissions: int = 0o600,
    exact: bool = False,
    suffix: str = ".tmp",
    encoding: str | None = None,
    newline: str | None = None,
) -> Iterator[IO[Any]]:
    """A file open for writing that becomes ``path`` when the block ends (renamed over it:
    a link there is replaced, never written through); if the block raises, the temporary
    (``.NAME.RANDOM`` + ``suffix``, beside ``path``) is removed and the error passes on.
    ``permissions``: the new file's mode, the umask applied, or exactly (``exact``)."""
    folder, name = os.path.split(path)
    temporary = os.path.join(folder, f".{name}.{secrets.token_hex(6)}{suffix}")
    fd = os.open(temporary, _NEW, permissions)
    try:
        if exact and hasattr(os, "fchmod"):
            os.fchmod(fd, permissions)
        f = os.fdopen(fd, mode, encoding=encoding, newline=newline)
    except BaseException:
        os.close(fd)
        _remove(temporary)
        raise
    try:
        with f:
            yield f
        os.replace(temporary, path)
    except BaseException:
        _remove(temporary)
        raise


def create_private(
    path: str,
    mode: str = "wb",
    *,
    dir_fd: int | None = None,
    encoding: str | None = None,
    newline: str | None = None,
) -> IO[Any]:
    """``path`` made new and open for writing: 0600 whatever the umask, never through a link
    and never over a file already there (FileExistsError, or ELOOP for a link); relative to
    the folder ``dir_fd`` if given."""
    fd = os.open(path, _NEW, 0o600, dir_fd=dir_fd)
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(fd, 0o600)  # (a umask may take bits of 0o600 too)
        return os.fdopen(fd, mode, encoding=encoding, newline=newline)
    except BaseException:
        os.close(fd)
        raise


def swap_folder(fresh: str, target: str) -> None:
    """Put the folder ``fresh``, filled, in ``target``'s place: the old one (if any) moved
    aside into a new folder beside it, ``fresh`` renamed, the old one removed. ``target`` is
    at every moment the old folder or the new one, whole; if the rename fails, the old one is
    put back and the error passes on (``fresh`` is the caller's to remove)."""
    if not os.path.lexists(target):
        os.replace(fresh, target)
        return
    trash = tempfile.mkdtemp(prefix=f".{os.path.basename(target)}-old-", dir=os.path.dirname(target) or ".")
    aside = os.path.join(trash, "old")
    try:
        os.replace(target, aside)
        try:
            os.replace(fresh, target)
        except BaseException:
            os.replace(aside, target)
            raise
    finally:
        shutil.rmtree(trash, ignore_errors=True)


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.remove(path)


# --------------------------------------------------------------------------- the caches


def cache_root() -> str:
    return os.environ.get("GRADER_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "grader"
    )


def cache_folder(name: str) -> str:
    return os.path.join(cache_root(), name)


@functools.cache
def versions(*libraries: str) -> str:
    """The grader's version and each of ``libraries``' ("?" where one is not installed),
    joined by "/": what makes a new grader or library miss the entries an old one wrote. A
    library's version is its module's ``__version__`` where it is imported already, else its
    distribution's (importlib.metadata: imported only then, it is not free)."""
    found = [__version__]
    for name in libraries:
        version = getattr(sys.modules.get(name), "__version__", None)
        if not isinstance(version, str):
            try:
                from importlib.metadata import version as distribution_version

                version = distribution_version(name)
            except Exception:
                version = "?"
        found.append(version)
    return "/".join(found)


def entry_name(prefix: str, *depends_on: object, digits: int = 20) -> str:
    """The name of an entry whose answer depends on ``depends_on`` (``versions(...)`` among
    them): ``prefix`` and their hash (repr of what JSON does not carry)."""
    ident = json.dumps(list(depends_on), default=str)
    digest = hashlib.sha256(ident.encode()).hexdigest()[:digits]
    return f"{prefix}-{digest}" if prefix else digest


def read_entry(path: str, parse: Callable[[bytes], T], max_bytes: int | None = None) -> T | None:
    """``parse`` of the entry at ``path``; None where there is none, it is a link, it is
    larger than ``max_bytes``, or ``parse`` finds it damaged or foreign (raises)."""
    try:
        fd = os.open(path, _READ)
        with os.fdopen(fd, "rb") as f:
            if max_bytes is not None and os.fstat(f.fileno()).st_size > max_bytes:
                return None
            data = f.read()
        return parse(data)
    except Exception:  # (an entry is only ever a saving: whatever is wrong with it, it is passed over)
        return None


def write_entry(path: str, data: bytes) -> None:
    """Keep ``data`` at ``path`` (its folder made, 0700), whole or not at all; a cache that
    cannot be written only costs time."""
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        with write_whole(path) as f:
            f.write(data)
    except OSError:
        pass


def read_json(folder: str, key: str) -> Any:
    """The JSON kept under ``key`` in the cache ``folder``; None when there is none or it
    cannot be read."""
    return read_entry(os.path.join(cache_folder(folder), key + ".json"), json.loads)


def write_json(folder: str, key: str, data: Any) -> None:
    """Keep ``data`` under ``key`` in the cache ``folder``, whole or not at all."""
    try:
        encoded = json.dumps(data).encode()
    except (TypeError, ValueError):
        return
    write_entry(os.path.join(cache_folder(folder), key + ".json"), encoded)
