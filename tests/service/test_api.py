"""The service's API as a course's scripts use it, and as a hostile student pushes it: a real
`grader serve` on loopback (tests/live_server.py), two students and a member of staff.

An upload is graded as `grader check` grades the same file for a student; a person sees only
their own uploads (another's id and a made-up one are the same 404); what is not a hand-in,
is too large (refused before it is read whole), names a task that only looks like one, or
has more parts than a form has is refused, stores nothing, and costs the server nothing
(/healthz after each); --attempts holds under uploads sent at once; --deadline marks uploads
late; staff regrade and export what `grader export` writes for the same grades; a stopped
server leaves no process behind.
"""

import concurrent.futures
import json
import os
import select
import shutil
import socket
import sqlite3
import time
import unicodedata
import uuid

import pytest
from conftest import PE_SAMPLES, PE_TASK, run_cli
from live_server import STAFF, client, graded, multipart, raw, sign_in, upload

from grader.service.uploads import MAX_BODY_BYTES
from grader.submission.file import MAX_SOURCE_BYTES

PE = "positional-encoding"
CORRECT, WRONG = "correct_vectorized.py", "mistake_sin_cos_swapped.py"
# Each student's uploads, in order (the last is their latest: what export and regrade take).
UPLOADS = {"alice": [WRONG, CORRECT], "bob": [CORRECT, WRONG]}
TINY = b"x = 1\n"


def sample(name: str) -> bytes:
    with open(os.path.join(PE_SAMPLES, name), "rb") as f:
        return f.read()


def healthy(live) -> None:
    """The server still serves (a hostile request cost only its sender)."""
    assert live.process.poll() is None, live.stderr()[-3000:]
    with client(live) as http:
        answer = http.get("/healthz")
    assert (answer.status_code, answer.text) == (200, "ok\n")


def rows(live, person: str | None = None) -> list[tuple]:
    """The submissions table as the database holds it (a refused request must add nothing)."""
    with sqlite3.connect(live.db_path) as db:
        query = "SELECT public_id, person, task, filename, status, finished, score FROM submissions"
        if person is None:
            return db.execute(query + " ORDER BY id").fetchall()
        return db.execute(query + " WHERE person = ? ORDER BY id", (person,)).fetchall()


def essentials(report: dict) -> tuple:
    """What a student reads of a report: the score, the status, each check's verdict."""
    checks = [(c["name"], c["status"], c["score"], c["message"]) for c in report["checks"]]
    return report["score"], report["max_score"], report["status"], checks


@pytest.fixture(scope="module")
def checked():
    """`grader check --format json` of each sample: what a student is given for it."""
    reports = {}
    for name in (CORRECT, WRONG):
        done = run_cli("check", PE_TASK, os.path.join(PE_SAMPLES, name), "--format", "json")
        assert done.returncode in (0, 1), done.stderr
        reports[name] = json.loads(done.stdout)
    return reports


@pytest.fixture(scope="module")
def uploaded(server):
    """Every upload of UPLOADS made through the API: (student, index) -> (file, public id)."""
    made = {}
    for student, names in UPLOADS.items():
        with client(server, server.tokens[student]) as http:
            for index, name in enumerate(names):
                answer = upload(http, PE, name, sample(name))
                assert answer.status_code == 202, answer.text
                assert answer.json()["status"] == "queued"
                made[student, index] = (name, answer.json()["id"])
    return made


def test_an_upload_is_graded_as_grader_check_grades_the_file_for_a_student(server, uploaded, checked):
    for (student, _), (name, public_id) in uploaded.items():
        with client(server, server.tokens[student]) as http:
            answer = graded(http, public_id)
        assert (answer["id"], answer["task"], answer["late"]) == (public_id, PE, False)
        assert answer["report"]["submission"] == name
        assert essentials(answer["report"]) == essentials(checked[name])
    assert checked[CORRECT]["status"] == "passed" and checked[WRONG]["status"] == "failed"
    healthy(server)


def test_export_is_what_grader_export_writes_for_the_same_grades(server, uploaded, tmp_path):
    staff = sign_in(server, STAFF)
    exported = {}
    for student, names in UPLOADS.items():
        with client(server, server.tokens[student]) as http:
            graded(http, uploaded[student, len(names) - 1][1])
    with client(server) as http:
        for kind in ("csv", "canvas"):
            answer = http.get(f"/staff/export?format={kind}&task={PE}", headers=staff.headers)
            assert answer.status_code == 200, answer.text
            assert answer.headers["content-type"] == "text/csv; charset=utf-8"
            exported[kind] = answer.content
        refused = http.get("/staff/export?format=csv&task=nonexistent", headers=staff.headers)
        assert refused.status_code == 400
    # The same files graded by grader batch (each student's latest upload), then exported.
    klass = tmp_path / "class"
    klass.mkdir()
    for student, names in UPLOADS.items():
        shutil.copy(os.path.join(PE_SAMPLES, names[-1]), klass / f"{student}.py")
    out = tmp_path / "out"
    done = run_cli("batch", PE_TASK, str(klass), "--out", str(out), "--jobs", "1", timeout=600)
    assert done.returncode == 0, done.stderr
    roster = os.path.join(server.folder, "roster.csv")
    done = run_cli("export", str(out), "--roster", roster, "--format", "canvas", "--task", PE)
    assert done.returncode == 0, done.stderr
    assert exported["csv"] == (out / f"grades-{PE}.csv").read_bytes()
    assert exported["canvas"] == (out / f"canvas-{PE}.csv").read_bytes()
    assert b"1001" in exported["canvas"] and b"1002" in exported["canvas"]  # the roster's LMS ids


def test_a_person_sees_only_their_own_uploads(server, uploaded):
    _, alices = uploaded["alice", 0]
    with client(server, server.tokens["bob"]) as bob, client(server, server.tokens["alice"]) as alice:
        theirs = bob.get(f"/api/submissions/{alices}")
        made_up = bob.get(f"/api/submissions/{uuid.uuid4().hex}")
        assert theirs.status_code == made_up.status_code == 404
        assert theirs.json() == made_up.json()  # nothing tells one from the other
        assert alice.get(f"/api/submissions/{alices}").status_code == 200
    with client(server, server.tokens[STAFF]) as staff:
        assert staff.get(f"/api/submissions/{alices}").status_code == 200  # staff see everyone's


@pytest.mark.parametrize(
    "path",
    [
        "/api/submissions/..%2f..%2fhealthz",
        "/api/submissions/%2e%2e",
        "/api/submissions/..",
        "/api/submissions/%00",
        "/api/submissions/%C0%AE%C0%AE",
        "/api/submissions/" + "a" * 5000,
        "/api/submissions/1",
        "/api/submissions/' OR '1'='1",
        "/api/submissions/%E2%80%AE",
    ],
)
def test_an_id_that_is_no_id_of_theirs_is_404(server, uploaded, path):
    token = server.tokens["bob"]
    request = f"GET {path.replace(' ', '%20')} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
    answer = raw(server, request.encode() + b"Connection: close\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 404 "), answer[:300]
    healthy(server)


def test_healthz_says_ok(server):
    with client(server) as http:
        answer = http.get("/healthz")
    assert (answer.status_code, answer.text) == (200, "ok\n")


@pytest.mark.parametrize(
    "authorization",
    [
        None,
        b"Bearer not-a-token",
        b"Bearer ",
        b"Basic YWxpY2U6cGFzc3dvcmQ=",
        b"Bearer {token} extra",
        b"Bearer {token}\tx",
        b"Bearer {token}\xff",
        b"Bearer \xc3\xa9{token}",
        b"Bearer " + b"A" * 20000,
        b"Bearer {staff_digest}",
        b"{token}",
    ],
    ids=lambda a: "none" if a is None else a[:24].decode("latin-1").encode("unicode_escape").decode(),
)
def test_without_a_valid_bearer_token_it_is_401(server, uploaded, authorization):
    import hashlib

    _, public_id = uploaded["alice", 0]
    header = b""
    if authorization is not None:
        value = authorization.replace(b"{token}", server.tokens["alice"].encode()).replace(
            b"{staff_digest}", hashlib.sha256(server.tokens[STAFF].encode()).hexdigest().encode()
        )
        header = b"Authorization: " + value + b"\r\n"
    for request in (
        f"GET /api/submissions/{public_id} HTTP/1.1\r\n".encode(),
        b"POST /api/submissions HTTP/1.1\r\nContent-Length: 0\r\n",
    ):
        answer = raw(server, request + b"Host: x\r\nConnection: close\r\n" + header + b"\r\n")
        status = answer.split(b"\r\n", 1)[0]
        if len(authorization or b"") > 16000:  # the server's header cap may answer first
            assert status.split()[1] in (b"400", b"401", b"431"), answer[:300]
        else:
            assert status == b"HTTP/1.1 401 Unauthorized", answer[:300]
            assert b"\r\nwww-authenticate: Bearer\r\n" in answer
    healthy(server)


def test_a_browser_session_is_no_api_token(server):
    alice = sign_in(server, "alice")
    with client(server) as http:
        answer = http.get(f"/api/submissions/{uuid.uuid4().hex}", headers=alice.headers)
        assert answer.status_code == 401
        answer = http.get(
            f"/api/submissions/{uuid.uuid4().hex}", headers={"authorization": f"Bearer {alice.cookie}"}
        )
        assert answer.status_code == 401


# --------------------------------------------------------------------------- too large


def test_a_declared_length_over_the_cap_is_refused_before_the_body_is_sent(server):
    before = rows(server)
    token = server.tokens["alice"]
    for path, kind in (("/api/submissions", b"application/json"), ("/upload", b"text/html")):
        head = (
            f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
            "Content-Type: multipart/form-data; boundary=zz\r\n"
            f"Content-Length: {MAX_BODY_BYTES + 1}\r\n\r\n"
        )
        started = time.monotonic()
        answer = raw(server, head.encode(), timeout=10)  # (no byte of the body is ever sent)
        assert answer.startswith(b"HTTP/1.1 413 "), answer[:300]
        assert b"content-type: " + kind in answer and b"\r\nconnection: close\r\n" in answer
        assert time.monotonic() - started < 3  # answered, and the connection closed, at once
    for nonsense in (b"-1", b"1e9", b"99999999999999999999999999"):
        answer = raw(
            server, b"POST /api/submissions HTTP/1.1\r\nHost: x\r\nContent-Length: " + nonsense + b"\r\n\r\n"
        )
        assert answer.split(b" ", 2)[1] in (b"400", b"413"), answer[:300]
    assert rows(server) == before
    healthy(server)


def test_a_sender_that_goes_on_sending_a_refused_body_is_cut_off(server):
    """The server does not read (and throw away) the rest of a body it refused."""
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    declared, sent = 200 << 20, 0
    with socket.create_connection((host, int(port)), timeout=30) as connection:
        connection.sendall(
            f"POST /api/submissions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {server.tokens['bob']}\r\n"
            f"Content-Type: multipart/form-data; boundary=zz\r\nContent-Length: {declared}\r\n\r\n".encode()
        )
        try:
            while sent < declared:
                connection.sendall(b"#" * 65536)
                sent += 65536
        except (BrokenPipeError, ConnectionResetError):
            pass
    assert sent < declared // 4
    healthy(server)


def streamed_upload(server, path: str, headers: str) -> tuple[bytes, int]:
    """A chunked upload of a file that never ends: what the server answered while it was
    still being sent, and how many bytes were sent by then."""
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    opening = (
        b'--zz\r\nContent-Disposition: form-data; name="task"\r\n\r\n' + PE.encode() + b"\r\n"
        b'--zz\r\nContent-Disposition: form-data; name="file"; filename="endless.py"\r\n\r\n'
    )
    chunk = b"# endless\n" * 6553
    sent, answer = 0, b""
    with socket.create_connection((host, int(port)), timeout=30) as connection:
        connection.sendall(
            f"POST {path} HTTP/1.1\r\nHost: x\r\n{headers}Content-Type: multipart/form-data; boundary=zz\r\n"
            "Transfer-Encoding: chunked\r\n\r\n".encode()
        )
        connection.sendall(b"%x\r\n%s\r\n" % (len(opening), opening))
        try:
            while sent < 256 << 20 and not select.select([connection], [], [], 0)[0]:
                connection.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass
        try:
            while part := connection.recv(65536):
                answer += part
                if b"\r\n\r\n" in answer:
                    break
        except (TimeoutError, ConnectionResetError):
            pass
    return answer, sent


def test_a_chunked_body_over_the_cap_is_refused_while_it_is_still_sent(server):
    before = rows(server)
    answer, sent = streamed_upload(
        server, "/api/submissions", f"Authorization: Bearer {server.tokens['alice']}\r\n"
    )
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:300]
    assert sent < 256 << 20  # answered long before the end (the socket buffers hold the rest)
    alice = sign_in(server, "alice")
    answer, sent = streamed_upload(server, "/upload", f"Cookie: grader_session={alice.cookie}\r\n")
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:300]
    assert sent < 256 << 20
    assert rows(server) == before
    healthy(server)


def test_a_file_over_the_cap_in_a_body_under_it_is_413(server):
    before = rows(server)
    with client(server, server.tokens["alice"]) as http:
        answer = upload(http, PE, "big.py", b"#" * (MAX_SOURCE_BYTES + 1))
    assert answer.status_code == 413, answer.text
    assert "1024 KiB" in answer.json()["error"]
    assert rows(server) == before
    healthy(server)


# --------------------------------------------------------------------------- what is refused


@pytest.mark.parametrize(
    ("task", "filename", "says"),
    [
        (PE, "solution.pyc", "compiled Python"),
        (PE, "solution", "not a .py or .ipynb file"),
        (PE, ".py", "not a .py or .ipynb file"),
        (PE, "solution.py\x00.txt", "not a .py or .ipynb file"),
        (PE, "solution\x00.py", "NUL"),  # (PostgreSQL cannot store it)
        (PE, "solution.py.", "not a .py or .ipynb file"),
        ("nonexistent", "solution.py", "no such task"),
        ("", "solution.py", "no such task"),
        ("positional\u2010encoding", "solution.py", "no such task"),  # a Unicode hyphen
        ("\uff50ositional-encoding", "solution.py", "no such task"),  # a fullwidth p (NFKC: p)
        ("positional-encoding ", "solution.py", "no such task"),
        ("Positional-Encoding", "solution.py", "no such task"),
        ("\u0455quare", "solution.py", "no such task"),  # the other task's id, a Cyrillic s
        ("squar\u0435", "solution.py", "no such task"),  # ... a Cyrillic e
        ("square\u200b", "solution.py", "no such task"),  # ... a zero-width space
        ("squa\u0072\u0323e", "solution.py", "no such task"),  # ... a combining mark
        ("../square", "solution.py", "no such task"),
    ],
)
def test_what_is_no_hand_in_for_a_task_is_400_and_stores_nothing(server, task, filename, says):
    before = rows(server)
    with client(server, server.tokens["alice"]) as http:
        answer = upload(http, task, filename, TINY)
    assert answer.status_code == 400, answer.text
    assert says in answer.json()["error"]
    assert rows(server) == before
    healthy(server)


def test_a_form_with_more_parts_than_an_upload_has_is_400(server):
    before = rows(server)
    file = ("file", ("a.py", TINY))
    forms = [
        [("task", PE), file, *[(f"extra{i}", "v") for i in range(5)]],  # fields
        [("task", PE), file, ("file2", ("b.py", TINY))],  # two files
        [("task", PE), file, ("file", ("b.py", TINY))],  # the file twice
        [("task", PE + "x" * 5000), file],  # a field larger than a field is
        [("task", PE)],  # no file
        [("task", PE), ("file", "x = 1")],  # a field, not a file
    ]
    with client(server, server.tokens["alice"]) as http:
        for parts in forms:
            body, kind = multipart(*parts)
            answer = http.post("/api/submissions", content=body, headers={"content-type": kind})
            assert answer.status_code == 400, (parts[-1], answer.text)
        for body, kind in [
            (b"garbage", "multipart/form-data; boundary=zz"),
            (
                b'--zz\r\nContent-Disposition: form-data; name="task"\r\n\r\n' + b"x" * 100000,
                "multipart/form-data; boundary=zz",
            ),
            (b"task=" + PE.encode(), "application/x-www-form-urlencoded"),
            (b'{"task": "positional-encoding"}', "application/json"),
            (b"x = 1\n", "text/x-python"),
        ]:
            answer = http.post("/api/submissions", content=body, headers={"content-type": kind})
            assert answer.status_code == 400, (body[:40], answer.text)
    assert rows(server) == before
    healthy(server)


CONTROLS = "\x1b\x07\x7f\u0085\u202e\u2066"  # C0, DEL, C1, bidi overrides
HOSTILE_NAME = "<img src=x onerror=alert(1)>" + CONTROLS + "[31m&amp;<!--.py"


def hidden(text: str) -> list[str]:
    """The control characters of ``text`` but line breaks and tabs (a terminal or the bidi
    algorithm would act on them)."""
    return [
        c
        for c in text
        if (unicodedata.category(c) == "Cc" and c not in "\n\r\t") or unicodedata.bidirectional(c) in BIDI
    ]


BIDI = {"LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"}


def test_a_hostile_file_name_is_stored_as_sent_and_shown_escaped(server):
    with client(server, server.tokens["bob"]) as http:
        answer = upload(
            http, "square", HOSTILE_NAME, b"import numpy as np\n\ndef square(x):\n    return np.square(x)\n"
        )
        assert answer.status_code == 202, answer.text
        public_id = answer.json()["id"]
        done = graded(http, public_id)
        text = http.get(f"/api/submissions/{public_id}").text
    assert [r[3] for r in rows(server, "bob") if r[0] == public_id] == [HOSTILE_NAME]  # stored as sent
    assert done["report"]["score"] == done["report"]["max_score"] > 0
    shown = done["report"]["submission"]
    assert shown.startswith("<img src=x onerror=alert(1)>")  # (JSON is not HTML: no need to escape)
    # no control character in the JSON: each is shown, as a report shows it
    assert hidden(text) == [] and hidden(shown) == [], text
    assert "\\x1b" in shown and "\\u202e" in shown
    bob, staff = sign_in(server, "bob"), sign_in(server, STAFF)
    with client(server) as http:
        pages = [
            http.get("/", headers=bob.headers),
            http.get(f"/attempts/{public_id}", headers=bob.headers),
            http.get("/staff/people/bob", headers=staff.headers),
            http.get(f"/staff/attempts/{public_id}", headers=staff.headers),
        ]
    for page in pages:
        assert page.status_code == 200, page.text
        assert "&lt;img src=x onerror=alert(1)&gt;" in page.text
        assert "<img" not in page.text and "<!--" not in page.text and "&amp;amp;" in page.text
        assert hidden(page.text) == []
    healthy(server)


def test_a_notebook_with_a_huge_cell_costs_only_its_sender(server):
    cell = {
        "cell_type": "code",
        "metadata": {},
        "outputs": [],
        "execution_count": None,
        "source": "x = 1\n" * 140000,
    }
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    data = json.dumps(notebook).encode()
    assert MAX_SOURCE_BYTES // 2 < len(data) <= MAX_SOURCE_BYTES
    with client(server, server.tokens["bob"]) as http:
        answer = upload(http, "square", "huge.ipynb", data)
        assert answer.status_code == 202, answer.text
        not_json = upload(http, "square", "not-json.ipynb", b"{" * 1000)
        assert not_json.status_code == 202, not_json.text
        for public_id in (answer.json()["id"], not_json.json()["id"]):
            report = graded(http, public_id)["report"]
            assert report["score"] == 0 and report["status"] == "error"
            assert "the grader itself failed" not in json.dumps(report)  # the file's fault, said so
    healthy(server)


# --------------------------------------------------------------------------- the course's rules


def test_attempts_hold_under_uploads_sent_at_once_and_late_uploads_are_marked(start_server):
    live = start_server("--attempts", "2", "--deadline", "2000-01-01T00:00:00+00:00")
    with client(live, live.tokens["alice"]) as http:
        assert upload(http, PE, "a.pyc", TINY).status_code == 400  # a refusal is no attempt
        made = [upload(http, PE, "a.py", TINY) for _ in range(3)]
        assert [a.status_code for a in made] == [202, 202, 429]
        assert "2 attempts" in made[2].json()["error"]
        for answer in made[:2]:
            assert http.get(f"/api/submissions/{answer.json()['id']}").json()["late"] is True

    def bobs(_):
        with client(live, live.tokens["bob"]) as http:
            return upload(http, PE, "b.py", TINY).status_code

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        statuses = sorted(pool.map(bobs, range(8)))
    assert statuses == [202, 202] + [429] * 6
    assert len(rows(live, "bob")) == 2
    with client(live, live.tokens[STAFF]) as http:  # staff have no limit
        assert [upload(http, PE, "s.py", TINY).status_code for _ in range(3)] == [202] * 3
    healthy(live)


def test_staff_regrade_queues_the_latest_upload_again(server, uploaded):
    _, latest = uploaded["alice", len(UPLOADS["alice"]) - 1]
    with client(server, server.tokens["alice"]) as http:
        before = graded(http, latest)
    finished = {r[0]: r[5] for r in rows(server)}
    staff = sign_in(server, STAFF)
    with client(server) as http:
        answer = http.post(
            "/staff/regrade",
            data={"csrf": staff.csrf, "person": "alice", "task": PE},
            headers={**staff.headers, "origin": server.url},
        )
        assert (answer.status_code, answer.headers["location"]) == (303, "/staff/people/alice")
        unknown = http.post(
            "/staff/regrade", data={"csrf": staff.csrf, "task": "nonexistent"}, headers=staff.headers
        )
        assert unknown.status_code == 404
    deadline = time.monotonic() + 120
    while True:
        now = {r[0]: (r[4], r[5]) for r in rows(server)}
        if now[latest][0] == "done" and now[latest][1] != finished[latest]:
            break
        assert time.monotonic() < deadline, now[latest]
        time.sleep(0.3)
    # only alice's latest upload of that task was graded again
    assert {i: f for i, (_, f) in now.items() if i != latest} == {
        i: f for i, f in finished.items() if i != latest
    }
    with client(server, server.tokens["alice"]) as http:
        assert essentials(graded(http, latest)["report"]) == essentials(before["report"])
    healthy(server)


def test_a_stopped_server_leaves_no_process_behind(start_server):
    live = start_server()
    with client(live, live.tokens["alice"]) as http:
        public_id = upload(http, PE, CORRECT, sample(CORRECT)).json()["id"]
        deadline = time.monotonic() + 60
        while http.get(f"/api/submissions/{public_id}").json()["status"] == "queued":
            assert time.monotonic() < deadline
            time.sleep(0.1)
    assert len(live.processes()) > 1  # the server and its pool
    stopping = time.monotonic()
    assert live.stop() == []
    assert time.monotonic() - stopping < 30
    assert live.process.returncode == 0, live.stderr()[-2000:]
