"""Everything one client can hold of `grader serve` is bounded by default (issue 34, class 2),
as a hostile student tries it, against a real server on loopback (the connections) or its
app in process (the uploads' and sessions' budgets, which the routes and the store keep):
one token storing upload after upload, one address holding a thousand connections that send
their heads a byte at a time, a body that never ends, a browser signing in again and again. Each is refused in
words that say what to do (429 with when to try again, 507, 503, 408), and honest students
and staff are served meanwhile. The attacker's connections come from 127.0.0.2 (loopback, a
peer of its own), the honest ones from 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import os
import resource
import socket
import sqlite3
import time

import httpx
import pytest
from helpers.live_server import client, healthy, multipart, rows, sign_in, until_closed, upload

from grader.service.limits import ClientLimits

PE = "positional-encoding"
ATTACKER = "127.0.0.2"


def address(live) -> tuple[str, int]:
    host, port = live.url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def connect_from(live, source: str = ATTACKER, timeout: float = 30.0) -> socket.socket:
    connection = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    connection.settimeout(timeout)
    connection.bind((source, 0))
    connection.connect(address(live))
    return connection


def stored_bytes(live) -> int:
    with sqlite3.connect(live.db_path) as db:
        return db.execute("SELECT coalesce(sum(size), 0) FROM contents").fetchone()[0]


@contextlib.contextmanager
def open_files(at_least: int):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < at_least:
        pytest.skip(f"this machine lets a process open {hard} files, fewer than the attack's {at_least}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, at_least), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


# --------------------------------------------------------------------------- uploads


def test_one_token_cannot_store_upload_after_upload(start_app):
    """Round four stored 40 uploads of 1 MiB from one token in 2.6 s. Now the 11th upload
    in a minute is 429 with Retry-After, nothing of it stored; another student uploads."""
    app = start_app()
    limit = ClientLimits().uploads_per_minute
    answers = []
    with client(app, app.tokens["alice"]) as http:
        for k in range(40):
            answers.append(upload(http, PE, f"flood_{k}.py", (b"# %d\n" % k).ljust(1 << 20, b"#")))
    accepted = [a for a in answers if a.status_code == 202]
    refused = [a for a in answers if a.status_code == 429]
    assert len(accepted) == limit and len(refused) == 40 - limit, [a.status_code for a in answers]
    assert all(1 <= int(a.headers["retry-after"]) <= 61 for a in refused)
    assert "a minute" in refused[0].json()["error"] and "try again in" in refused[0].json()["error"]
    assert len(rows(app)) == limit and stored_bytes(app) <= limit * ((1 << 20) + 16)
    with client(app, app.tokens["bob"]) as http:  # (the budget is alice's own)
        assert upload(http, PE, "mine.py", b"x = 1\n").status_code == 202
    healthy(app)


def test_distinct_bytes_per_person_and_task_are_bounded_and_identical_bytes_cost_nothing(start_app):
    app = start_app("--limit", "upload-mib-per-task=1", "--limit", "uploads-per-minute=1000")
    part = 400 << 10
    with client(app, app.tokens["alice"]) as http:
        for k in range(2):
            assert upload(http, PE, f"a{k}.py", bytes([65 + k]) * part).status_code == 202
        over = upload(http, PE, "a2.py", b"C" * part)
        assert over.status_code == 429 and "1 MiB" in over.json()["error"]
        assert "retry-after" not in over.headers  # (waiting does not cure it)
        for _ in range(5):  # the same file again: stored once, never over the budget
            assert upload(http, PE, "again.py", b"A" * part).status_code == 202
    assert stored_bytes(app) == 2 * part
    alice = sign_in(app, "alice")
    with client(app) as http:  # the page says it in words, with the form
        parts = [("csrf", alice.csrf), ("task", PE), ("file", ("a3.py", b"D" * part))]
        body, kind = multipart(*parts)
        page = http.post(
            "/upload", content=body, headers={"content-type": kind, "origin": app.url, **alice.headers}
        )
    assert page.status_code == 429 and "1 MiB" in page.text and "<h1>Your tasks</h1>" in page.text


def test_below_the_disk_reserve_uploads_get_507_and_nothing_is_stored(start_app):
    free_mib = os.statvfs("/").f_bavail  # (any figure above the disk's free space)
    app = start_app("--limit", f"free-disk-mib={free_mib * 1024 + 1}")
    with client(app, app.tokens["alice"]) as http:
        answer = upload(http, PE, "mine.py", b"x = 1\n")
    assert answer.status_code == 507 and "disk" in answer.json()["error"]
    assert rows(app) == []
    healthy(app)


def test_signing_in_again_and_again_keeps_a_bounded_number_of_sessions(start_app):
    app = start_app("--limit", "sessions-per-person=3")
    browsers = [sign_in(app, "alice") for _ in range(12)]
    with sqlite3.connect(app.db_path) as db:
        assert db.execute("SELECT count(*) FROM sessions WHERE person = 'alice'").fetchone()[0] == 3
    with client(app) as http:
        assert "<h1>Your tasks</h1>" in http.get("/", headers=browsers[-1].headers).text
        assert "<h1>Sign in</h1>" in http.get("/", headers=browsers[0].headers).text


# --------------------------------------------------------------------------- connections


def slow_head(live) -> socket.socket | None:
    """A connection from the attacker that starts a request's head and never ends it; None
    when the server answered at the door (503) and closed it."""
    connection = connect_from(live)
    try:
        connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-a")
    except (BrokenPipeError, ConnectionResetError):
        connection.close()
        return None
    return connection


def test_a_thousand_slow_connections_from_one_address_lock_no_one_out(start_server):
    """Round four: 1,100 connections sending their heads a byte every 5 s locked every
    student and the staff out. Now one address holds at most connections-per-peer (512)
    open; the rest are answered 503 at the door, and everyone else is served meanwhile."""
    live = start_server()
    per_peer = ClientLimits().connections_per_peer
    with open_files(1400):
        held = []
        try:
            for _ in range(1100):
                held.append(connect_from(live))
            for connection in held:
                connection.setblocking(False)
            refused: set[socket.socket] = set()
            deadline = time.monotonic() + 30
            while len(refused) < 1100 - per_peer and time.monotonic() < deadline:
                time.sleep(0.5)  # (the server takes each one, or answers it at the door)
                refused |= {c for c in held if c not in refused and answered_at_the_door(c)}
            assert len(refused) == 1100 - per_peer
            healthy(live)  # the honest address is served while the 512 are held
            alice = sign_in(live, "alice")
            with client(live) as http:
                assert "<h1>Your tasks</h1>" in http.get("/", headers=alice.headers).text
                assert http.get("/staff", headers=sign_in(live, "prof").headers).status_code == 200
        finally:
            for connection in held:
                connection.close()


def answered_at_the_door(connection: socket.socket) -> bool:
    """Whether the server answered this connection 503 and closed it (without blocking)."""
    try:
        got = connection.recv(200)
    except BlockingIOError:
        return False  # (held: nothing sent yet)
    except ConnectionResetError:
        got = b"HTTP/1.1 503"
    assert got.startswith(b"HTTP/1.1 503 "), got
    return True


def test_a_head_that_never_completes_is_answered_408_and_closed(start_server):
    live = start_server("--limit", "head-seconds=2")
    started = time.monotonic()
    connection = slow_head(live)
    assert connection is not None
    dribbled = 0
    try:
        while time.monotonic() - started < 30:  # a byte a second, as round four sent them
            connection.sendall(b"x")
            dribbled += 1
            time.sleep(1)
    except (BrokenPipeError, ConnectionResetError):
        pass
    got = until_closed(connection)
    connection.close()
    assert got.startswith(b"HTTP/1.1 408 ") or got == b"", got[:200]
    assert dribbled < 30  # (cut off long before the attacker stopped)
    silent = connect_from(live)  # a connection that never sends a byte is closed too
    assert until_closed(silent, timeout=60).startswith(b"HTTP/1.1 408 ")
    silent.close()
    healthy(live)


def test_a_body_that_stops_or_crawls_is_cut_off_and_stores_nothing(start_server):
    live = start_server("--limit", "body-idle-seconds=2", "--limit", "body-seconds=4")
    head = (
        f"POST /api/submissions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {live.tokens['alice']}\r\n"
        "Content-Type: multipart/form-data; boundary=zz\r\nContent-Length: 5000\r\n\r\n"
    ).encode()
    stopped = connect_from(live)
    stopped.sendall(head + b"--zz\r\n")
    assert until_closed(stopped, timeout=60).startswith(b"HTTP/1.1 408 ")
    stopped.close()
    crawling = connect_from(live)
    crawling.sendall(head)
    sent = 0
    try:
        for _ in range(60):
            crawling.sendall(b"-")
            sent += 1
            time.sleep(0.5)
    except (BrokenPipeError, ConnectionResetError):
        pass
    crawling.close()
    assert sent < 60
    assert rows(live) == []
    healthy(live)


def test_past_the_concurrency_limit_requests_are_answered_503_and_a_trusted_proxy_is_not_capped(
    start_server,
):
    live = start_server(
        "--limit",
        "connections=40",
        "--limit",
        "connections-per-peer=10",
        "--limit",
        "head-seconds=120",
        "--trusted-proxy",
        ATTACKER,
    )
    held = [slow_head(live) for _ in range(40)]
    try:
        assert all(c is not None for c in held)  # (a trusted proxy's 40: not capped at 10)
        honest = connect_from(live, "127.0.0.1")
        honest.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert until_closed(honest).startswith(b"HTTP/1.1 503 ")
        honest.close()
    finally:
        for connection in held:
            if connection is not None:
                connection.close()
    deadline = time.monotonic() + 30
    while True:  # (the server sees the 40 go)
        with client(live) as http:
            if http.get("/healthz").status_code == 200:
                break
        assert time.monotonic() < deadline
        time.sleep(0.2)


def test_the_soft_open_file_limit_is_raised_at_start(start_server):
    live = start_server()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    with open(f"/proc/{live.process.pid}/limits") as f:
        line = next(x for x in f if x.startswith("Max open files"))
    served_soft = int(line.split()[3])
    wanted = ClientLimits().connections + 256
    assert served_soft >= min(wanted, hard if hard != resource.RLIM_INFINITY else wanted)
    assert "limits uploads-per-minute=10" in open(os.path.join(live.folder, "stdout.txt")).read()


# --------------------------------------------------------------------------- round four's red team, again


def test_a_client_that_never_reads_its_answers_is_cut_off_and_frees_its_place(start_server):
    """Thousands of pipelined requests whose answers are never read: the connection would
    wait for ever to send them (and hold its address's count); it ends once it has read
    nothing for body-idle-seconds, and its address is served again."""
    live = start_server("--limit", "body-idle-seconds=2", "--limit", "connections-per-peer=1")
    hog = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    hog.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # (its window: it takes nothing)
    hog.bind((ATTACKER, 0))
    hog.connect(address(live))
    hog.settimeout(30)
    request = b"GET /signin HTTP/1.1\r\nHost: x\r\n\r\n"
    sent, ended = 0, False
    deadline = time.monotonic() + 90
    try:
        while time.monotonic() < deadline:
            hog.sendall(request * 200)
            sent += 200
    except (BrokenPipeError, ConnectionResetError, TimeoutError):
        ended = True
    hog.close()
    assert ended, f"still open after {sent} requests"
    for _ in range(60):  # its place is given back: the same address is served
        again = connect_from(live)
        again.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        got = until_closed(again)
        again.close()
        if got.startswith(b"HTTP/1.1 200 "):
            break
        time.sleep(0.5)
    assert got.startswith(b"HTTP/1.1 200 "), got[:200]


def test_past_the_connections_limit_a_new_connection_is_answered_at_the_door(start_server):
    """Idle connections from many addresses (each under its own cap) never run the server
    out of open files: past `connections` in all, a new one is answered 503 at once, before
    it sends anything, and closed; the server still answers once they go."""
    live = start_server("--limit", "connections=30", "--limit", "connections-per-peer=10")
    held = []
    try:
        for k in range(30):
            held.append(connect_from(live, f"127.0.0.{10 + k // 10}"))
        time.sleep(1.0)
        late = connect_from(live, "127.0.0.20")
        assert until_closed(late, timeout=10).startswith(b"HTTP/1.1 503 ")
        late.close()
    finally:
        for connection in held:
            connection.close()
    deadline = time.monotonic() + 30
    while True:
        try:
            with client(live) as http:
                if http.get("/healthz").status_code == 200:
                    break
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline
        time.sleep(0.2)


def test_upgrade_requests_and_broken_forms_neither_leak_places_nor_fill_the_log(start_server):
    live = start_server("--limit", "connections-per-peer=3")
    for _ in range(12):  # WebSocket upgrades: refused as plain requests, each place given back
        c = connect_from(live)
        c.sendall(
            b"GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
            b"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
        )
        c.recv(100)
        c.close()
    for path in ("/signout", "/signin", "/staff/regrade") * 10:  # a body that never comes
        c = connect_from(live)
        c.sendall(
            f"POST {path} HTTP/1.1\r\nHost: x\r\nOrigin: {live.url}\r\n"
            "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nt".encode()
        )
        c.close()
    time.sleep(1.0)
    c = connect_from(live)
    c.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert until_closed(c).startswith(b"HTTP/1.1 200 ")
    c.close()
    logged = live.stderr()
    assert "Traceback" not in logged and "ClientDisconnect" not in logged, logged[-2000:]
    assert "Unsupported upgrade" not in logged and "WebSocket" not in logged


def test_a_trusted_proxy_elsewhere_passes_the_scheme_its_students_used(start_server):
    """Behind a proxy that is not on 127.0.0.1 (another container, another host), the
    proxy's X-Forwarded-Proto is taken from it (and from no one else), so that a form posted
    through it over HTTPS is this site's own."""
    live = start_server("--trusted-proxy", "127.0.0.5")
    host = live.url.removeprefix("http://")
    headers = {"origin": f"https://{host}", "x-forwarded-proto": "https"}
    form = {"token": live.tokens["alice"]}
    proxy = httpx.Client(
        base_url=live.url, transport=httpx.HTTPTransport(local_address="127.0.0.5"), timeout=60
    )
    with proxy:
        assert proxy.post("/signin", data=form, headers=headers).status_code == 303
    with client(live) as http:  # the same headers from an address that is no proxy
        assert http.post("/signin", data=form, headers=headers).status_code == 403


def test_one_person_sends_at_most_two_uploads_at_once(start_server):
    """Each upload's body is held in memory until it is whole: a third one sent at once, its
    body never finished, is refused before it is read."""
    live = start_server()
    token = live.tokens["alice"]
    head = (
        f"POST /api/submissions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
        "Content-Type: multipart/form-data; boundary=zz\r\nContent-Length: 900000\r\n\r\n"
    ).encode()
    slow = []
    try:
        for _ in range(ClientLimits().uploads_in_flight):
            c = connect_from(live, "127.0.0.1")
            c.sendall(head + b"--zz\r\n")
            slow.append(c)
        time.sleep(1.0)
        third = connect_from(live, "127.0.0.1")
        third.sendall(head + b"--zz\r\n")
        got = until_closed(third, timeout=10)
        third.close()
        assert got.startswith(b"HTTP/1.1 429 ") and b"retry-after: 5" in got.lower(), got[:300]
        with client(live, live.tokens["bob"]) as http:  # (another person is not held back)
            assert upload(http, PE, "mine.py", b"x = 1\n").status_code == 202
    finally:
        for c in slow:
            c.close()
