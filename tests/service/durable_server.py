"""`grader serve` started as a user starts it, for the durability tests and
bench/serve_speed.py: a process group of its own (so a test can kill -9 the server and
everything it started, as a crash or an OOM killer would), the address read from the line it
prints, tokens from `grader serve-token`, uploads and polls through the HTTP API, and the
database read directly to count rows.

No pytest here: bench/serve_speed.py imports it too.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass

import httpx

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PE_TASK = os.path.join(ROOT, "tasks", "positional-encoding")
PE_SAMPLES = os.path.join(ROOT, "submissions", "positional-encoding")
LISTENING = re.compile(r"grader serve: listening on (http://\S+)")

# A task that grades in a fraction of a second: what floods and crowds are made of.
TINY_TASK_YAML = """\
id: tiny-square
title: Square every entry
version: 1
functions:
  square: [x]
imports: {allowed: [numpy]}
checks:
  - name: small
    kind: example
    call: square
    args: {x: {array: {value: [1.0, 2.0]}}}
  - name: negative
    kind: example
    call: square
    args: {x: {array: {value: [-3.0, 0.5]}}}
"""
TINY_REFERENCE = "import numpy as np\n\n\ndef square(x):\n    return np.asarray(x, dtype=float) ** 2\n"
TINY_RIGHT = "def square(x):\n    return x * x\n"
TINY_WRONG = "def square(x):\n    return x + x\n"


def make_tiny_task(folder: str) -> str:
    os.makedirs(folder, exist_ok=True)
    for name, text in (
        ("task.yaml", TINY_TASK_YAML),
        ("reference.py", TINY_REFERENCE),
        ("statement.md", "Square every entry.\n"),
    ):
        with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
            f.write(text)
    return folder


def write_roster(path: str, students: Iterable[str]) -> str:
    with open(path, "w", encoding="utf-8") as f:
        f.write("submission_id,lms_id,name\n")
        for i, student in enumerate(students):
            f.write(f"{student},{1000 + i},{student.title()}\n")
    return path


def grader_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "grader", *args]


def token(db: str, student: str, cwd: str, env: dict | None = None) -> str:
    done = subprocess.run(
        grader_command("serve-token", "--db", db, student),
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def process_tree(root: int) -> set[int]:
    """``root`` and every live process descended from it (sandboxes' own sessions too)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(b")") + 2 :].split()
        if fields[0] != b"Z":
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, ()))
    return found


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rindex(b")") + 2 :].split()[0] != b"Z"


class Server:
    """One `grader serve` process group: start(), kill9(), stop()."""

    def __init__(self, tasks: list[str], roster: str, db: str, jobs: int, folder: str, *extra: str):
        self.tasks, self.roster, self.db, self.jobs = tasks, roster, db, jobs
        self.folder, self.extra = folder, extra
        self.process: subprocess.Popen | None = None
        self.url = ""
        self.starts = 0
        self.first_line = ""

    def start(self, timeout: float = 180) -> Server:
        self.starts += 1
        out = os.path.join(self.folder, f"serve-{self.starts}.out")
        self.err = os.path.join(self.folder, f"serve-{self.starts}.err")
        argv = grader_command(
            "serve", *self.tasks, "--roster", self.roster, "--port", "0", "--db", self.db,
            "--jobs", str(self.jobs), *self.extra,
        )  # fmt: skip
        with open(out, "wb") as stdout, open(self.err, "wb") as stderr:
            self.process = subprocess.Popen(
                argv, stdout=stdout, stderr=stderr, cwd=self.folder, start_new_session=True
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with open(out, encoding="utf-8", errors="replace") as f:
                found = LISTENING.search(f.read())
            if found:
                self.first_line = found.string.strip()
                self.url = found.group(1)
                return self
            if self.process.poll() is not None:
                raise AssertionError(f"grader serve ended ({self.process.returncode}): {self.stderr()}")
            time.sleep(0.05)
        self.kill9()
        raise AssertionError(f"grader serve did not say where it listens: {self.stderr()}")

    def stderr(self) -> str:
        with open(self.err, encoding="utf-8", errors="replace") as f:
            return f.read()[-4000:]

    def tree(self) -> set[int]:
        assert self.process is not None
        return process_tree(self.process.pid)

    def pool_processes(self) -> list[int]:
        """The grading pool's processes (children of the server, not its resource tracker)."""
        found = []
        for pid in self.tree():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    command = f.read()
                with open(f"/proc/{pid}/stat", "rb") as f:
                    stat = f.read()
            except OSError:
                continue
            parent = int(stat[stat.rindex(b")") + 2 :].split()[1])
            if parent == self.process.pid and b"spawn_main" in command:  # type: ignore[union-attr]
                found.append(pid)
        return sorted(found)

    def kill9(self) -> set[int]:
        """SIGKILL the server's whole process group at once; the processes it had started
        (its pool, their sandboxes), as they were just before."""
        assert self.process is not None
        before = self.tree()
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait(timeout=30)
        return before

    def stop(self) -> None:
        """As an operator stops it (Ctrl-C), then kill -9 whatever is left of the group."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait(timeout=30)


class Client:
    """The API as a student's script uses it."""

    def __init__(self, url: str):
        self.url = url
        self.http = httpx.Client(base_url=self.url, timeout=60)

    def close(self) -> None:
        self.http.close()

    def upload(self, token: str, task: str, filename: str, content: bytes) -> httpx.Response:
        return self.http.post(
            "/api/submissions",
            headers={"authorization": f"Bearer {token}"},
            data={"task": task},
            files={"file": (filename, content, "text/x-python")},
        )

    def status(self, token: str, public_id: str) -> dict:
        answer = self.http.get(f"/api/submissions/{public_id}", headers={"authorization": f"Bearer {token}"})
        assert answer.status_code == 200, answer.text
        return answer.json()

    def healthz(self) -> httpx.Response:
        return self.http.get("/healthz")

    def wait_done(self, tokens: dict[str, str], timeout: float, poll: float = 0.1) -> dict[str, float]:
        """Polls every upload (public id -> its token) until all are done; public id -> the
        time (time.time()) its feedback was first seen."""
        seen: dict[str, float] = {}
        deadline = time.monotonic() + timeout
        while len(seen) < len(tokens):
            if time.monotonic() > deadline:
                missing = {i: self.status(tokens[i], i)["status"] for i in tokens if i not in seen}
                raise AssertionError(f"not graded in {timeout} s: {missing}")
            health = self.healthz()
            if health.status_code != 200:
                raise AssertionError(f"/healthz: {health.status_code} {health.text}")
            for public_id, secret in tokens.items():
                if public_id not in seen and self.status(secret, public_id)["status"] == "done":
                    seen[public_id] = time.time()
            time.sleep(poll)
        return seen


def upload_all(url: str, uploads: list[tuple[str, str, str, bytes]], threads: int) -> list[httpx.Response]:
    """(token, task, filename, content) uploads sent at once from ``threads`` threads, each
    with a connection of its own; the answers in the same order."""

    def send(item: tuple[str, str, str, bytes]) -> httpx.Response:
        client = Client(url)
        try:
            return client.upload(*item)
        finally:
            client.close()

    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        return list(pool.map(send, uploads))


@dataclass(frozen=True)
class Row:
    public_id: str
    person: str
    filename: str
    status: str
    claimed_by: str | None
    uploaded: float
    started: float | None
    finished: float | None
    score: float | None
    max_score: float | None
    report: dict | None


def rows(db: str) -> list[Row]:
    """Every row of the submissions table, read directly (not through the service)."""
    from sqlalchemy import create_engine, text

    engine = create_engine(db)
    try:
        with engine.connect() as connection:
            found = connection.execute(
                text(
                    "SELECT public_id, person, filename, status, claimed_by, uploaded, started, "
                    "finished, score, max_score, report FROM submissions ORDER BY id"
                )
            ).all()
    finally:
        engine.dispose()
    return [Row(*r[:10], json.loads(r[10]) if r[10] else None) for r in found]
