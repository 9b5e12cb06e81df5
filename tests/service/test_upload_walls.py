"""The walls around an upload, as a hostile student tries them, against a real `grader serve`
on loopback (tests/helpers/live_server.py) where the bytes on the socket or the grading are
the point, else against its app in process (``app``: tests/helpers/in_process.py): a body
over the cap is refused before it is read whole (its length declared, or chunked, or sent on
after the refusal); what is not a hand-in, names a task that only looks like one of the
service's, or has more parts than an upload's form is refused and stores nothing; a hostile
file name is stored as sent and shown escaped; a notebook with a huge cell costs only its
sender. The server serves on after each (/healthz).
"""

import json
import select
import socket
import time
import unicodedata

import pytest
from helpers.live_server import STAFF, client, graded, healthy, multipart, raw, rows, sign_in, upload

from grader.service.uploads import MAX_BODY_BYTES
from grader.submission.file import MAX_SOURCE_BYTES

PE = "positional-encoding"
TINY = b"x = 1\n"


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


def test_a_file_over_the_cap_in_a_body_under_it_is_413(app):
    before = rows(app)
    with client(app, app.tokens["alice"]) as http:
        answer = upload(http, PE, "big.py", b"#" * (MAX_SOURCE_BYTES + 1))
    assert answer.status_code == 413, answer.text
    assert "1024 KiB" in answer.json()["error"]
    assert rows(app) == before
    healthy(app)


# --------------------------------------------------------------------------- what is refused


@pytest.mark.parametrize(
    ("task", "filename", "says"),
    [
        (PE, "solution.pyc", "compiled Python"),
        (PE, "solution", "not a .py or .ipynb file"),
        (PE, ".py", "not a .py or .ipynb file"),
        (PE, "solution.py\x00.txt", "NUL"),
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
def test_what_is_no_hand_in_for_a_task_is_400_and_stores_nothing(app, task, filename, says):
    before = rows(app)
    with client(app, app.tokens["alice"]) as http:
        answer = upload(http, task, filename, TINY)
    assert answer.status_code == 400, answer.text
    assert says in answer.json()["error"]
    assert rows(app) == before
    healthy(app)


def test_a_form_with_more_parts_than_an_upload_has_is_400(app):
    before = rows(app)
    file = ("file", ("a.py", TINY))
    forms = [
        [("task", PE), file, *[(f"extra{i}", "v") for i in range(5)]],  # fields
        [("task", PE), file, ("file2", ("b.py", TINY))],  # two files
        [("task", PE), file, ("file", ("b.py", TINY))],  # the file twice
        [("task", PE + "x" * 5000), file],  # a field larger than a field is
        [("task", PE)],  # no file
        [("task", PE), ("file", "x = 1")],  # a field, not a file
    ]
    with client(app, app.tokens["alice"]) as http:
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
    assert rows(app) == before
    healthy(app)


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


def test_a_hostile_file_name_is_stored_as_sent_and_shown_escaped(app):
    with client(app, app.tokens["bob"]) as http:
        answer = upload(
            http, "square", HOSTILE_NAME, b"import numpy as np\n\ndef square(x):\n    return np.square(x)\n"
        )
        assert answer.status_code == 202, answer.text
        public_id = answer.json()["id"]
        done = graded(http, public_id)
        text = http.get(f"/api/submissions/{public_id}").text
    assert [r[3] for r in rows(app, "bob") if r[0] == public_id] == [HOSTILE_NAME]  # stored as sent
    assert done["report"]["score"] == done["report"]["max_score"] > 0
    shown = done["report"]["submission"]
    assert shown.startswith("<img src=x onerror=alert(1)>")  # (JSON is not HTML: no need to escape)
    # no control character in the JSON: each is shown, as a report shows it
    assert hidden(text) == [] and hidden(shown) == [], text
    assert "\\x1b" in shown and "\\u202e" in shown
    bob, staff = sign_in(app, "bob"), sign_in(app, STAFF)
    with client(app) as http:
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
    healthy(app)


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
