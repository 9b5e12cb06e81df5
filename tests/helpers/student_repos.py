"""Real git repositories as students push them, made with git's own plumbing, so that any
entry a student can commit can be made: files, symbolic links (mode 120000), submodule
entries (160000), names with newlines or escapes, and commits with whatever date the student
claims. Shared by tests/integration/test_collect.py and test_github_actions.py."""

import os
import subprocess
import tempfile
from dataclasses import dataclass


@dataclass(frozen=True)
class Link:
    target: str


@dataclass(frozen=True)
class Submodule:
    commit: str = "0123456789abcdef0123456789abcdef01234567"


def git(*args, cwd=None, env=None, input=None) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=dict(os.environ, **(env or {})),
        input=input,
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return done.stdout.decode().strip()


class StudentRepo:
    """A bare repository (as on GitHub) whose default branch is ``main``."""

    def __init__(self, path):
        self.path = str(path)
        git("init", "-q", "--bare", self.path)
        git("symbolic-ref", "HEAD", "refs/heads/main", cwd=self.path)
        self.tip = None

    def commit(self, files: dict, date: str = "2026-11-01T10:00:00Z", message: str = "work") -> str:
        """A commit on main holding exactly ``files`` (path -> str, bytes, Link or Submodule),
        dated ``date`` (author and committer: what the student's git claims)."""
        with tempfile.TemporaryDirectory() as scratch:
            env = {"GIT_INDEX_FILE": os.path.join(scratch, "index")}
            records = []
            for path, content in files.items():
                if isinstance(content, Submodule):
                    mode, sha = "160000", content.commit
                else:
                    data = content.target if isinstance(content, Link) else content
                    data = data.encode() if isinstance(data, str) else data
                    sha = git("hash-object", "-w", "--stdin", cwd=self.path, input=data)
                    mode = "120000" if isinstance(content, Link) else "100644"
                records.append(f"{mode} {sha}\t{path}".encode("utf-8", "surrogateescape") + b"\0")
            git("update-index", "-z", "--index-info", cwd=self.path, env=env, input=b"".join(records))
            tree = git("write-tree", "--missing-ok", cwd=self.path, env=env)
        dated = {
            "GIT_AUTHOR_DATE": date,
            "GIT_COMMITTER_DATE": date,
            "GIT_AUTHOR_NAME": "student",
            "GIT_AUTHOR_EMAIL": "s@example.org",
            "GIT_COMMITTER_NAME": "student",
            "GIT_COMMITTER_EMAIL": "s@example.org",
        }
        parents = ["-p", self.tip] if self.tip else []
        self.tip = git("commit-tree", tree, *parents, "-m", message, cwd=self.path, env=dated)
        git("update-ref", "refs/heads/main", self.tip, cwd=self.path)
        return self.tip


def roster(path, students: dict) -> str:
    """A roster.csv of ``students`` (id -> repo), lms ids 1001 on, names 'Student <id>'."""
    lines = ["submission_id,lms_id,name,repo"]
    for number, (sid, repo) in enumerate(students.items()):
        lines.append(f"{sid},{1001 + number},Student {sid},{repo}")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return str(path)
