"""`grader serve` as a course starts it, for the tests of the service: a real process on
loopback (port 0) with a fresh SQLite database and a roster (alice, bob), and a member of
staff whose token ``grader serve-token --staff`` made. Started with ``start``, which returns
once the server printed its listening line; ``LiveServer.stop`` sends SIGTERM, then SIGKILL,
and leaves no process of it behind (each server's processes carry a mark in their
environment: its pool processes and their sandboxes' launchers are found by it).

Shared by tests/service/ (its conftest's fixtures) and tests/browser/test_service_pages.py.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from helpers.paths import PE_SAMPLES, ROOT
from helpers.tasks import make_task

STUDENTS = ("alice", "bob")
STAFF = "prof"
MARK = "GRADER_TEST_SERVER"  # in the environment of a test server's processes
LISTENING = re.compile(r"grader serve: listening on (http://([0-9.]+|\[[0-9a-f:]+\]):(\d+)) ")

# A second task, small, so that a task field can name one task while meaning another.
SQUARE_YAML = """
id: square
title: Square
version: 1
functions:
  square: [x]
checks:
  - name: one-case
    kind: example
    call: square
    args: {x: {array: {value: [1.0, 2.0]}}}
"""


@dataclass
class LiveServer:
    url: str
    tokens: dict[str, str]  # person -> a sign-in token
    db: str  # the database's URL
    db_path: str
    folder: str
    process: subprocess.Popen
    mark: str
    listening: str  # the line it printed
    stopped: bool = field(default=False)

    def stderr(self) -> str:
        with open(os.path.join(self.folder, "stderr.txt"), encoding="utf-8", errors="replace") as f:
            return f.read()

    def token(self, person: str, staff: bool = False) -> str:
        """A new token from grader serve-token, as staff make them."""
        return serve_token(self.db, person, staff)

    def processes(self) -> list[int]:
        """The live processes of this server (itself, its pool, the sandboxes' launchers)."""
        return _marked(f"{MARK}={self.mark}".encode())

    def stop(self, grace: float = 30.0) -> list[int]:
        """SIGTERM, then SIGKILL after ``grace`` seconds; then waits for its other processes
        to end, and kills any still there. Returns the pids that outlived the server by more
        than a few seconds (killed here): none, when it stops as it should."""
        if self.stopped:
            return []
        self.stopped = True
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        deadline = time.monotonic() + 10
        left = self.processes()
        while left and time.monotonic() < deadline:
            time.sleep(0.2)
            left = self.processes()
        for pid in left:  # (only processes this server started: they carry its mark)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return left


GRADER = (sys.executable, "-m", "grader")  # the grader under test (tests/ uses its own)


def serve_token(
    db: str, person: str, staff: bool = False, umask: int = -1, grader: tuple[str, ...] = GRADER
) -> str:
    command = [*grader, "serve-token", "--db", db, person]
    done = subprocess.run(
        command + (["--staff"] if staff else []),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        umask=umask,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def square_task(folder: str) -> str:
    """A small task (id ``square``) in ``folder``/square."""
    return make_task(Path(folder) / "square", SQUARE_YAML)


ROSTER_ROWS = {"alice": "alice,1001,Alice Liddell", "bob": "bob,1002,Bob Dylan"}


def start(
    folder: str,
    tasks: list[str],
    *options: str,
    timeout: float = 180.0,
    students: tuple[str, ...] = STUDENTS,
    umask: int = -1,
    default_db: bool = False,
    grader: tuple[str, ...] = GRADER,
) -> LiveServer:
    """``grader serve TASKS --roster --port 0 --db sqlite:///FOLDER/service.sqlite OPTIONS``,
    once it listens, with a token for each student (of ``students``, the roster) and for
    staff. Started again on the same folder, it serves the same database. ``umask``: the
    server's and grader serve-token's; ``default_db``: no --db (FOLDER/grader-serve/, made
    by the server, not by grader serve-token beforehand); ``grader``: the command that runs
    the grader (another install's, in a simulated container)."""
    os.makedirs(folder, exist_ok=True)
    roster = os.path.join(folder, "roster.csv")
    with open(roster, "w", encoding="utf-8") as f:
        f.write("submission_id,lms_id,name\n" + "".join(ROSTER_ROWS[s] + "\n" for s in students))
    db_path = os.path.join(folder, "grader-serve" if default_db else "", "service.sqlite")
    db = f"sqlite:///{db_path}"
    staff_token = (  # (before the server: it makes the tables too)
        "" if default_db else serve_token(db, STAFF, staff=True, umask=umask, grader=grader)
    )
    mark = uuid.uuid4().hex
    command = [
        *grader,
        "serve",
        *tasks,
        "--roster",
        roster,
        "--port",
        "0",
        *([] if default_db else ["--db", db]),
        "--jobs",
        "1",
        *options,
    ]
    stdout = open(os.path.join(folder, "stdout.txt"), "wb")
    stderr = open(os.path.join(folder, "stderr.txt"), "wb")
    try:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            cwd=folder,
            env={**os.environ, MARK: mark},
            umask=umask,
        )
    finally:
        stdout.close()
        stderr.close()
    server = LiveServer("", {STAFF: staff_token}, db, db_path, folder, process, mark, "")
    deadline = time.monotonic() + timeout
    try:
        while True:
            with open(os.path.join(folder, "stdout.txt"), encoding="utf-8", errors="replace") as f:
                printed = f.read()
            found = LISTENING.search(printed)
            if found:
                break
            if process.poll() is not None:
                raise AssertionError(f"grader serve ended ({process.returncode}): {server.stderr()[-3000:]}")
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"grader serve did not listen in {timeout:g} s: {server.stderr()[-3000:]}"
                )
            time.sleep(0.1)
        server.url = found.group(1)
        server.listening = printed.splitlines()[0]
        if default_db:
            server.tokens[STAFF] = serve_token(db, STAFF, staff=True, umask=umask, grader=grader)
        for student in students:
            server.tokens[student] = serve_token(db, student, umask=umask, grader=grader)
    except BaseException:
        server.stop()
        raise
    return server


def _marked(mark: bytes) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                environment = f.read()
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if mark in environment.split(b"\0") and state != "Z":
            found.append(int(pid))
    return found


# --------------------------------------------------------------------------- requests


def client(live: LiveServer, token: str | None = None) -> httpx.Client:
    """An HTTP client of the server (with a bearer token when given) that keeps no cookie.
    (Of an app in this process too, helpers/in_process.py: through its transport.)"""
    headers = {"authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(
        base_url=live.url,
        headers=headers,
        timeout=60,
        follow_redirects=False,
        transport=getattr(live, "transport", None),
    )


def multipart(*parts: tuple[str, str | tuple[str, bytes]]) -> tuple[bytes, str]:
    """A multipart/form-data body written byte by byte (a file name exactly as given) and
    its content type. ``parts``: (field, value) or (field, (file name, bytes))."""
    boundary = "grader-test-" + uuid.uuid4().hex
    body = b""
    for name, value in parts:
        if isinstance(value, tuple):
            filename, data = value
            head = (
                f'Content-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
                "Content-Type: application/octet-stream\r\n"
            )
        else:
            head, data = f'Content-Disposition: form-data; name="{name}"\r\n', value.encode()
        body += (
            f"--{boundary}\r\n".encode() + head.encode("utf-8", "surrogateescape") + b"\r\n" + data + b"\r\n"
        )
    return body + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def upload(http: httpx.Client, task: str, filename: str, content: bytes, **headers: str) -> httpx.Response:
    body, kind = multipart(("task", task), ("file", (filename, content)))
    return http.post("/api/submissions", content=body, headers={"content-type": kind, **headers})


def graded(http: httpx.Client, public_id: str, timeout: float = 180.0) -> dict:
    """The API's answer for an upload once it is graded."""
    deadline = time.monotonic() + timeout
    while True:
        answer = http.get(f"/api/submissions/{public_id}")
        assert answer.status_code == 200, answer.text
        if answer.json()["status"] == "done":
            return answer.json()
        assert time.monotonic() < deadline, f"not graded in {timeout:g} s: {answer.json()}"
        time.sleep(0.3)


@dataclass
class Browser:
    """A signed-in browser, as the pages see one: its session cookie and the CSRF secret
    its forms hold."""

    cookie: str
    csrf: str
    set_cookie: str  # the header that set it

    @property
    def name(self) -> str:
        """The cookie's name (``__Host-grader_session`` with --secure-cookies)."""
        return self.set_cookie.split("=", 1)[0]

    @property
    def headers(self) -> dict[str, str]:
        return {"cookie": f"{self.name}={self.cookie}"}


CSRF_FIELD = re.compile(r'name="csrf" value="([^"]+)"')


def sign_in(live: LiveServer, person: str) -> Browser:
    """Signs ``person`` in through the sign-in form, as a browser posts it."""
    with client(live) as http:
        answer = http.post("/signin", data={"token": live.tokens[person]}, headers={"origin": live.url})
        assert answer.status_code == 303, answer.text
        set_cookie = answer.headers["set-cookie"]
        name, cookie = re.match(r"((?:__Host-)?grader_session)=([^;]+);", set_cookie).groups()
        home = http.get("/", headers={"cookie": f"{name}={cookie}"})
        assert home.status_code == 200, home.text
    return Browser(cookie, CSRF_FIELD.search(home.text).group(1), set_cookie)


def raw(live: LiveServer, request: bytes, timeout: float = 30.0) -> bytes:
    """A request sent byte by byte on a socket of its own; what came back until the server
    closed the connection (or ``timeout``). A live server's only: the bytes go to its socket."""
    assert isinstance(live, LiveServer), "raw() sends bytes to a live server's socket"
    host, port = live.url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=timeout) as connection:
        connection.sendall(request)
        return until_closed(connection, timeout)


def until_closed(connection: socket.socket, timeout: float = 30.0) -> bytes:
    """What the server sent on ``connection`` until it closed it (or ``timeout``)."""
    connection.settimeout(timeout)
    received = b""
    try:
        while chunk := connection.recv(65536):
            received += chunk
    except (TimeoutError, ConnectionResetError):
        pass
    return received


# --------------------------------------------------------------------------- checks


def sample(name: str) -> bytes:
    """A sample submission of positional-encoding, its bytes."""
    with open(os.path.join(PE_SAMPLES, name), "rb") as f:
        return f.read()


def healthy(live: LiveServer) -> None:
    """The server still serves (a hostile request cost only its sender). (Of an app in this
    process too: its /healthz.)"""
    if isinstance(live, LiveServer):
        assert live.process.poll() is None, live.stderr()[-3000:]
    with client(live) as http:
        answer = http.get("/healthz")
    assert (answer.status_code, answer.text) == (200, "ok\n")


def rows(live: LiveServer, person: str | None = None) -> list[tuple]:
    """The submissions table as the database holds it (a refused request adds nothing)."""
    with sqlite3.connect(live.db_path) as db:
        query = "SELECT public_id, person, task, filename, status, finished, score FROM submissions"
        if person is None:
            return db.execute(query + " ORDER BY id").fetchall()
        return db.execute(query + " WHERE person = ? ORDER BY id", (person,)).fetchall()
