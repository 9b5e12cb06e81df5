"""A student's git repository, fetched and read as data: never checked out, never trusted.

Everything in it is the student's: file names, modes, sizes, dates, the history's shape.
So it is fetched into a private bare repository (no working tree: no file of it is ever
written to disk, no link ever made, no filter or hook of it ever run) and read through
git's object commands (``rev-list``, ``ls-tree``, ``cat-file``), each with a time limit
and a cap on what it may print.

The URL may carry a secret (a token, from the environment). It reaches git only through
the environment of that one git process (``GIT_CONFIG_*``: never its command line, which
any process on the machine may read, and never a file: no remote is configured, no
FETCH_HEAD written), and every message of git's that the grader repeats has each secret,
and the password of any URL, replaced by ``***``.
"""

from __future__ import annotations

import os
import re
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass

GRADED_REF = "refs/grader/graded"
# Transports git may use: not ext:: (runs a command) nor fd::.
ALLOWED_PROTOCOLS = "file:git:http:https:ssh"
GIT_MESSAGE_BYTES = 600  # of git's stderr, in a reason
LISTING_BYTES = 4 << 20  # a folder's listing, a history: more is no course repository
_URL_PASSWORD = re.compile(r"(?i)([a-z][a-z0-9+.-]*://[^/@\s:]*:)[^/@\s]+@")


class GitError(Exception):
    """A git command failed; the message is git's reason, secrets redacted."""


class GitTimeout(GitError):
    """A git command ran past its time limit (and was killed, with its helpers)."""


class EmptyRepository(GitError):
    """The repository was reached and holds no commit: nothing was ever pushed to it."""


@dataclass(frozen=True)
class Secrets:
    """The strings no output may hold (tokens from the environment)."""

    values: tuple[str, ...] = ()

    def redact(self, text: str) -> str:
        for value in sorted(self.values, key=len, reverse=True):
            if value:
                text = text.replace(value, "***")
        return _URL_PASSWORD.sub(r"\1***@", text)


@dataclass(frozen=True)
class TreeEntry:
    """One entry of a git tree, as ``git ls-tree -l`` lists it."""

    mode: str  # "100644", "100755" (files), "120000" (link), "160000" (submodule), "040000"
    type: str  # git's object type: blob, tree or commit
    object: str
    size: int | None  # a blob's size in bytes; None for a tree or a submodule
    name: str  # the name's bytes as the file system would give them (os.fsdecode)

    @property
    def is_file(self) -> bool:
        return self.type == "blob" and self.mode in ("100644", "100755", "100664")


def _environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update(GIT_TERMINAL_PROMPT="0", GIT_ALLOW_PROTOCOL=ALLOWED_PROTOCOLS, GIT_OPTIONAL_LOCKS="0")
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")  # no password prompt either
    env.pop("GIT_DIR", None)
    env.pop("GIT_WORK_TREE", None)
    if extra:
        # Configuration by environment (git 2.31+), after any the caller already set.
        given = env.get("GIT_CONFIG_COUNT", "0")
        count = int(given) if given.isdigit() else 0
        for key, value in extra.items():
            env[f"GIT_CONFIG_KEY_{count}"], env[f"GIT_CONFIG_VALUE_{count}"] = key, value
            count += 1
        env["GIT_CONFIG_COUNT"] = str(count)
    return env


# Nothing of git's own housekeeping may outlive a command or write outside the repository.
_QUIET = [
    "-c",
    "gc.auto=0",
    "-c",
    "maintenance.auto=false",
    "-c",
    "fetch.writeCommitGraph=false",
    "-c",
    "core.hooksPath=/dev/null",
]


def _run(
    args: list[str],
    secrets: Secrets,
    seconds: float,
    cap: int = LISTING_BYTES,
    config: dict[str, str] | None = None,
) -> bytes:
    """Run git; its output (at most ``cap`` bytes, read as it comes: a hostile tree or
    history cannot make the grader hold more), or GitError with its reason. The whole
    process group is killed at the time limit or the cap (git's helpers included)."""
    process = subprocess.Popen(
        ["git", *_QUIET, *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_environment(config),
        start_new_session=True,
    )
    assert process.stdout is not None and process.stderr is not None
    out_fd, err_fd = process.stdout.fileno(), process.stderr.fileno()
    caps = {out_fd: cap, err_fd: 64 << 10}  # (stderr past its cap: dropped)
    got = {out_fd: bytearray(), err_fd: bytearray()}
    deadline = time.monotonic() + seconds
    try:
        with selectors.DefaultSelector() as selector:
            for fd in caps:
                selector.register(fd, selectors.EVENT_READ)
            while selector.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise GitTimeout(f"git gave no answer within {seconds:g} s")
                for key, _ in selector.select(left):
                    chunk = os.read(key.fd, 1 << 16)
                    if not chunk:
                        selector.unregister(key.fd)
                    elif len(got[key.fd]) <= caps[key.fd]:
                        got[key.fd] += chunk
                if len(got[out_fd]) > cap:
                    raise GitError(f"git's answer is larger than {_size(cap)}")
        try:
            process.wait(max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            raise GitTimeout(f"git gave no answer within {seconds:g} s") from None
    finally:
        if process.poll() is None:
            _kill(process)
        process.stdout.close()
        process.stderr.close()
    if process.returncode != 0:
        text = bytes(got[err_fd]).decode("utf-8", "replace").strip()
        text = text or f"git exited with {process.returncode}"
        raise GitError(secrets.redact(" ".join(text.split()))[:GIT_MESSAGE_BYTES])
    return bytes(got[out_fd])


def _size(cap: int) -> str:
    return f"{cap >> 20} MiB" if cap >= 1 << 20 else f"{cap >> 10} KiB"


def _kill(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


class Repository:
    """A private bare repository holding one student's default branch (``GRADED_REF``)."""

    def __init__(self, parent: str, secrets: Secrets, seconds: float):
        self.path = tempfile.mkdtemp(prefix="repo-", dir=parent)
        self.secrets = secrets
        self.seconds = seconds
        _run(["init", "-q", "--bare", "--template=", self.path], secrets, seconds)

    def git(self, *args: str, cap: int = LISTING_BYTES, config: dict[str, str] | None = None) -> bytes:
        return _run(
            ["--git-dir", self.path, "--literal-pathspecs", *args], self.secrets, self.seconds, cap, config
        )

    def fetch(self, url: str) -> None:
        """The remote's default branch (what its HEAD names), with its history. GitError
        with git's reason when it cannot be fetched; an empty repository says so."""
        remote = {"remote.origin.url": url}
        try:
            self.git(
                "fetch",
                "--quiet",
                "--no-write-fetch-head",
                "--no-tags",
                "--no-recurse-submodules",
                "origin",
                f"+HEAD:{GRADED_REF}",
                config=remote,
            )
        except GitTimeout:
            raise
        except GitError as exc:
            try:  # reached, but holding no branch: the student never pushed
                heads = self.git("ls-remote", "origin", config=remote)
            except GitError:
                raise exc from None
            if not heads.strip():
                raise EmptyRepository("the repository is empty (nothing was ever pushed to it)") from None
            raise

    def first_parent_history(self, limit: int = 50_000) -> list[tuple[str, int]]:
        """(commit, committer timestamp) from the tip back to the first commit, along first
        parents: the default branch as it grew."""
        out = self.git("rev-list", "--first-parent", "--timestamp", f"--max-count={limit + 1}", GRADED_REF)
        history = []
        for line in out.decode("ascii", "replace").splitlines():
            stamp, _, commit = line.partition(" ")
            history.append((commit, int(stamp)))
        if len(history) > limit:
            raise GitError(f"its history holds more than {limit} commits")
        return history

    def entry(self, commit: str, path: str) -> TreeEntry | None:
        """The entry at ``path`` (from the root) in ``commit``, or None."""
        entries = _parse(self.git("ls-tree", "-z", "-l", "--full-tree", commit, "--", path))
        return entries[0] if entries else None

    def listing(self, tree: str) -> list[TreeEntry]:
        """The entries of a tree object, never recursing."""
        return _parse(self.git("ls-tree", "-z", "-l", tree))

    def blob(self, entry: TreeEntry, cap: int) -> bytes:
        """A blob's bytes, at most ``cap`` (GitError beyond: its size was checked first)."""
        return self.git("cat-file", "blob", entry.object, cap=cap)

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def _parse(out: bytes) -> list[TreeEntry]:
    """``<mode> <type> <object> <size>\\t<name>\\0`` records (``ls-tree -z -l``)."""
    entries = []
    for record in out.split(b"\0"):
        if not record:
            continue
        head, _, name = record.partition(b"\t")
        mode, type_, obj, size = head.decode("ascii", "replace").split()
        entries.append(TreeEntry(mode, type_, obj, int(size) if size.isdigit() else None, os.fsdecode(name)))
    return entries
