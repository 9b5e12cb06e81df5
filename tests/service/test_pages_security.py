"""The walls around the service's pages, most against its app in process (``app``,
``start_app``: tests/helpers/in_process.py), some against a real `grader serve` on loopback
(tests/helpers/live_server.py: a failure's 500 and /healthz while grading is stopped, where it
listens): sign-in (a good token, a bad one, a cookie forged from a token), the session
cookie's flags, CSRF (a form without its secret, with another's, or from another origin is
refused and changes nothing), what a student may not open (the staff pages, another
student's attempt), the security headers on every response (pages, API, errors, 404, 413,
500), and a server that listens on loopback only.
"""

import re
import socket
import sqlite3
import time
import uuid

import pytest
from helpers.live_server import STAFF, client, graded, healthy, multipart, rows, sample, sign_in, upload

from grader.service.uploads import MAX_BODY_BYTES
from grader.service.walls import SECURITY_HEADERS

PE = "positional-encoding"


def sessions(live) -> int:
    with sqlite3.connect(live.db_path) as db:
        return db.execute("SELECT count(*) FROM sessions").fetchone()[0]


@pytest.fixture(scope="module")
def attempts(app):
    """An upload of each student's, graded: their public ids."""
    ids = {}
    for student in ("alice", "bob"):
        with client(app, app.tokens[student]) as http:
            answer = upload(http, PE, "correct_vectorized.py", sample("correct_vectorized.py"))
            assert answer.status_code == 202, answer.text
            ids[student] = answer.json()["id"]
            graded(http, ids[student])
    return ids


# --------------------------------------------------------------------------- sign-in


def test_signing_in_with_a_token_sets_a_strict_session_cookie(app):
    browser = sign_in(app, "alice")
    flags = [f.strip().lower() for f in browser.set_cookie.split(";")[1:]]
    assert "httponly" in flags and "samesite=strict" in flags and "path=/" in flags
    assert "secure" not in flags  # (plain HTTP on loopback: a Secure cookie would never come back)
    assert browser.cookie != app.tokens["alice"]
    with client(app) as http:
        home = http.get("/", headers=browser.headers)
    assert home.status_code == 200
    assert "<h1>Your tasks</h1>" in home.text and "signed in as Alice Liddell" in home.text
    assert home.text.count('<form method="post" action="/upload"') == 2  # a form per task


def test_secure_cookies_makes_the_cookie_https_only(start_app):
    app = start_app("--secure-cookies")
    browser = sign_in(app, "bob")
    flags = [f.strip().lower() for f in browser.set_cookie.split(";")[1:]]
    assert "secure" in flags and "httponly" in flags and "samesite=strict" in flags
    # (a name only this host can set, over HTTPS, for the whole site: no sibling plants one)
    assert browser.name == "__Host-grader_session" and "domain" not in browser.set_cookie.lower()
    with client(app) as http:
        planted = http.get("/", headers={"cookie": f"grader_session={browser.cookie}"})
        assert "<h1>Sign in</h1>" in planted.text  # (the plain name is no session there)


@pytest.mark.parametrize(
    "token",
    [
        "",
        "not-a-token",
        "x" * 5000,
        "{token}\n",
        "{token} ",
        "{token}x",
        "\u0430{token}",
        "{cookie}",
        "{digest}",
    ],
)
def test_a_bad_token_signs_no_one_in(app, token):
    import hashlib

    alice = sign_in(app, "alice")
    token = (
        token.replace("{token}", app.tokens["alice"])
        .replace("{cookie}", alice.cookie)
        .replace("{digest}", hashlib.sha256(app.tokens["alice"].encode()).hexdigest())
    )
    before = sessions(app)
    with client(app) as http:
        answer = http.post("/signin", data={"token": token}, headers={"origin": app.url})
    if len(token) > 1024:  # (over the sign-in form's field size: refused as a form)
        assert answer.status_code == 400, answer.text
    else:
        assert answer.status_code == 401, answer.text
        assert "that token is not valid" in answer.text
    assert "set-cookie" not in answer.headers
    assert sessions(app) == before
    healthy(app)


def test_signing_in_from_another_site_is_refused(app):
    before = sessions(app)
    with client(app) as http:
        for origin in ("http://evil.example", "null", app.url.replace("127.0.0.1", "localhost"), None):
            headers = {} if origin is None else {"origin": origin}  # (none: a form that hides its origin)
            answer = http.post("/signin", data={"token": app.tokens["alice"]}, headers=headers)
            assert answer.status_code == 403, (origin, answer.text)
            assert "set-cookie" not in answer.headers
            assert "set-cookie" not in answer.headers
    assert sessions(app) == before


def test_a_cookie_forged_from_a_token_is_no_session(app, attempts):
    with client(app) as http:
        for forged in (app.tokens["alice"], app.tokens[STAFF], "A" * 43, "x" * 5000, uuid.uuid4().hex):
            cookie = {"cookie": f"grader_session={forged}"}
            home = http.get("/", headers=cookie)
            assert home.status_code == 200 and "<h1>Sign in</h1>" in home.text  # not signed in
            assert http.get("/staff", headers=cookie).status_code == 401
            assert http.get(f"/attempts/{attempts['alice']}", headers=cookie).status_code == 401
    healthy(app)


def test_deleting_a_token_ends_the_sessions_it_opened(start_app):
    """A leaked token is revoked by deleting its row (docs/service.md): whoever signed in
    with it is signed out then, not 12 hours later; a session of another token stays."""
    import hashlib

    app = start_app()
    thief, other = sign_in(app, "alice"), sign_in(app, "bob")
    newer = app.token("bob")
    with sqlite3.connect(app.db_path) as db:  # alice's token leaked, and bob's newer one
        db.execute("DELETE FROM tokens WHERE person = 'alice'")
        db.execute("DELETE FROM tokens WHERE digest = ?", (hashlib.sha256(newer.encode()).hexdigest(),))
    with client(app) as http:
        home = http.get("/", headers=thief.headers)
        assert "<h1>Sign in</h1>" in home.text and "Your tasks" not in home.text
        assert http.get("/staff", headers=thief.headers).status_code == 401
        assert form_upload(http, thief, thief.csrf, origin=app.url).status_code == 401
        assert "<h1>Your tasks</h1>" in http.get("/", headers=other.headers).text  # (his first token's)


def test_the_database_holds_no_session_secret_as_it_is(app):
    """Cookies and CSRF secrets are stored only as their SHA-256 (docs/service.md): a copy
    of the database (a backup) holds neither a cookie nor a form's secret."""
    import hashlib

    browser = sign_in(app, "alice")
    with sqlite3.connect(app.db_path) as db:
        stored = " ".join(" ".join(map(str, row)) for row in db.execute("SELECT * FROM sessions"))
    assert browser.cookie not in stored and browser.csrf not in stored
    assert hashlib.sha256(browser.cookie.encode()).hexdigest() in stored


def test_a_sign_in_link_with_a_bad_token_shows_no_token(app):
    with client(app) as http:
        for bad in ('"><script>alert(1)</script>', "x" * 5000, "\u202e", app.tokens["alice"] + "x"):
            page = http.get("/signin", params={"token": bad})
            assert page.status_code == 401 and "is not valid" in page.text
            assert "<script>" not in page.text and bad not in page.text
            assert 'name="token" value=' not in page.text  # (nothing filled in)
            assert "set-cookie" not in page.headers


def test_a_classmate_s_link_names_the_account_it_opens_and_signs_no_one_in_by_itself(app):
    """Round four's attack: alice mails bob "your personal link", /signin?token=<alice's>.
    Opening it signs no one in; the page names alice's account (name and id) and asks to
    confirm, and warns bob's browser, signed in as bob, that it would file his uploads as
    alice's. Only the confirmation signs in, as the account it named and no other."""
    bob = sign_in(app, "bob")
    before = sessions(app)
    link = f"/signin?token={app.tokens['alice']}"
    with client(app) as http:
        fresh = http.get(link)  # a browser signed in as no one
        assert fresh.status_code == 200 and "set-cookie" not in fresh.headers
        assert "Alice Liddell (alice)" in fresh.text and "someone else" in fresh.text
        assert "This browser is signed in as" not in fresh.text
        warned = http.get(link, headers=bob.headers)  # bob's own browser
        assert "set-cookie" not in warned.headers
        assert "This browser is signed in as <strong>Bob Dylan (bob)</strong>" in warned.text
        assert "filed as alice's attempts" in warned.text
        assert sessions(app) == before
        # bob's browser is still bob's: his home page, his upload form
        home = http.get("/", headers=bob.headers)
        assert "signed in as Bob Dylan (bob)" in home.text and "Upload as bob" in home.text
        # the confirmation names its account: a form that names another one signs no one in
        forged = http.post(
            "/signin",
            data={"token": app.tokens["alice"], "account": "bob"},
            headers={"origin": app.url, **bob.headers},
        )
        assert forged.status_code == 401 and "set-cookie" not in forged.headers
        assert sessions(app) == before
        confirmed = http.post(
            "/signin",
            data={"token": app.tokens["alice"], "account": "alice"},
            headers={"origin": app.url, **bob.headers},
        )
        assert confirmed.status_code == 303
        cookie = re.match(r"grader_session=([^;]+);", confirmed.headers["set-cookie"]).group(1)
        alice_home = http.get("/", headers={"cookie": f"grader_session={cookie}"})
        assert (
            "signed in as Alice Liddell (alice)" in alice_home.text and "Upload as alice" in alice_home.text
        )
        # the browser's bob session was signed out as the page warned (not left open beside)
        assert "<h1>Sign in</h1>" in http.get("/", headers=bob.headers).text
    assert sessions(app) == before


def test_every_page_that_takes_an_upload_says_whose_attempt_it_files(app):
    alice = sign_in(app, "alice")
    with client(app) as http:
        home = http.get("/", headers=alice.headers)
        forms = home.text.split('<form method="post" action="/upload"')[1:]
        assert forms and all("Upload as alice" in f.split("</form>")[0] for f in forms)
        assert all("filed as an attempt of Alice Liddell (alice)" in f.split("</form>")[0] for f in forms)


def test_signing_out_ends_the_session_only_with_its_csrf_secret(app):
    browser = sign_in(app, "bob")
    with client(app) as http:
        refused = http.post("/signout", data={"csrf": "wrong"}, headers=browser.headers)
        assert refused.status_code == 303
        assert "Your tasks" in http.get("/", headers=browser.headers).text  # still signed in
        done = http.post(
            "/signout", data={"csrf": browser.csrf}, headers={**browser.headers, "origin": app.url}
        )
        assert done.status_code == 303
        assert "<h1>Sign in</h1>" in http.get("/", headers=browser.headers).text


# --------------------------------------------------------------------------- CSRF


def form_upload(http, browser, csrf=None, **headers):
    parts = [("task", PE), ("file", ("forged.py", b"x = 1\n"))]
    if csrf is not None:
        parts.insert(0, ("csrf", csrf))
    body, kind = multipart(*parts)
    return http.post("/upload", content=body, headers={**browser.headers, "content-type": kind, **headers})


def test_a_form_without_its_csrf_secret_or_from_elsewhere_is_refused_and_changes_nothing(app, attempts):
    alice, bob, staff = sign_in(app, "alice"), sign_in(app, "bob"), sign_in(app, STAFF)
    before = rows(app)
    with client(app) as http:
        for csrf, headers in [
            (None, {}),
            ("", {}),
            ("wrong", {}),
            (bob.csrf, {}),  # another session's
            (alice.cookie, {}),
            (alice.csrf, {"origin": "http://evil.example"}),
            (alice.csrf, {"origin": "null"}),
            (alice.csrf, {"origin": app.url + ".evil.example"}),
        ]:
            answer = form_upload(http, alice, csrf, **headers)
            assert answer.status_code == 403, (csrf, headers, answer.text)
        for data, headers in [
            ({"person": "alice"}, {}),
            ({"person": "alice", "csrf": "wrong"}, {}),
            ({"person": "alice", "csrf": alice.csrf}, {}),  # a student's own secret
            ({"person": "alice", "csrf": staff.csrf}, {"origin": "http://evil.example"}),
            ({"csrf": staff.csrf}, {"origin": "null"}),
        ]:
            answer = http.post("/staff/regrade", data=data, headers={**staff.headers, **headers})
            assert answer.status_code == 403, (data, headers, answer.text)
    assert rows(app) == before
    with client(app) as http:  # the same forms, as the pages post them, are taken
        assert form_upload(http, alice, alice.csrf, origin=app.url).status_code == 303
    assert len(rows(app)) == len(before) + 1
    with client(app, app.tokens["alice"]) as api:  # (graded before the next test reads the rows)
        graded(api, rows(app)[-1][0])
    healthy(app)


# --------------------------------------------------------------------------- what a student may open


def test_a_student_is_refused_every_staff_page(app, attempts):
    alice = sign_in(app, "alice")
    before = rows(app)
    with client(app) as http:
        for path in (
            "/staff",
            "/staff/people/alice",
            "/staff/people/bob",
            f"/staff/attempts/{attempts['bob']}",
            f"/staff/attempts/{attempts['alice']}",
            f"/staff/export?format=csv&task={PE}",
            f"/staff/export?format=canvas&task={PE}",
        ):
            answer = http.get(path, headers=alice.headers)
            assert answer.status_code == 403, (path, answer.text)
            assert "Staff only" in answer.text and "Bob Dylan" not in answer.text
        regrade = http.post(
            "/staff/regrade", data={"csrf": alice.csrf}, headers={**alice.headers, "origin": app.url}
        )
        assert regrade.status_code == 403
    assert rows(app) == before


def test_a_student_cannot_open_another_students_attempt(app, attempts):
    alice = sign_in(app, "alice")
    with client(app) as http:
        own = http.get(f"/attempts/{attempts['alice']}", headers=alice.headers)
        assert own.status_code == 200 and "Score:" in own.text
        theirs = http.get(f"/attempts/{attempts['bob']}", headers=alice.headers)
        made_up = http.get(f"/attempts/{uuid.uuid4().hex}", headers=alice.headers)
        assert theirs.status_code == made_up.status_code == 404
        assert theirs.text == made_up.text
        for path in ("/attempts/..%2fstaff", "/attempts/%00", "/attempts/" + "f" * 3000, "/attempts/bob"):
            assert http.get(path, headers=alice.headers).status_code == 404, path


# --------------------------------------------------------------------------- headers


def test_every_response_carries_the_security_headers(app, attempts):
    alice, staff = sign_in(app, "alice"), sign_in(app, STAFF)
    seen = {}
    with client(app) as http, client(app, app.tokens["alice"]) as api:
        answers = {
            "sign-in page": http.get("/"),
            "sign-in link": http.get("/signin?token=abc"),
            "signed in": http.post("/signin", data={"token": app.tokens["bob"]}, headers={"origin": app.url}),
            "bad token": http.post("/signin", data={"token": "x"}),
            "home": http.get("/", headers=alice.headers),
            "attempt": http.get(f"/attempts/{attempts['alice']}", headers=alice.headers),
            "another's attempt": http.get(f"/attempts/{attempts['bob']}", headers=alice.headers),
            "staff refused": http.get("/staff", headers=alice.headers),
            "class": http.get("/staff", headers=staff.headers),
            "a student": http.get("/staff/people/alice", headers=staff.headers),
            "export": http.get(f"/staff/export?format=csv&task={PE}", headers=staff.headers),
            "form refused": form_upload(http, alice, "wrong"),
            "form unreadable": http.post(
                "/upload", content=b"junk", headers={**alice.headers, "content-type": "multipart/form-data"}
            ),
            "unknown page": http.get("/nonexistent"),
            "wrong method": http.get("/upload"),
            "healthz": http.get("/healthz"),
            "api 202": upload(api, "square", "a.py", b"x = 1\n"),
            "api 200": api.get(f"/api/submissions/{attempts['alice']}"),
            "api 400": upload(api, "nonexistent", "a.py", b"x = 1\n"),
            "api 401": http.get(f"/api/submissions/{attempts['alice']}"),
            "api 404": api.get(f"/api/submissions/{attempts['bob']}"),
            # (a body whose length is over the cap: refused by it, before it is read)
            "413": api.post(
                "/api/submissions",
                content=b"#" * (MAX_BODY_BYTES + 1),
                headers={"content-type": "multipart/form-data; boundary=zz"},
            ),
        }
        for name, answer in answers.items():
            seen[name] = (answer.status_code, {k: answer.headers.get(k) for k in SECURITY_HEADERS})
    statuses = {name: status for name, (status, _) in seen.items()}
    assert {statuses[n] for n in ("unknown page", "another's attempt", "api 404")} == {404}
    assert (statuses["wrong method"], statuses["413"], statuses["staff refused"]) == (405, 413, 403)
    assert statuses["form unreadable"] == 400 and statuses["export"] == 200
    for name, (status, headers) in seen.items():
        assert headers == SECURITY_HEADERS, (name, status, headers)


def test_a_failure_of_the_service_answers_500_with_the_security_headers(start_server):
    live = start_server()
    alice = sign_in(live, "alice")
    with sqlite3.connect(live.db_path) as db:  # the database breaks under the server
        db.execute("ALTER TABLE submissions RENAME TO broken")
    with client(live, live.tokens["alice"]) as api, client(live) as http:
        answers = [api.get(f"/api/submissions/{uuid.uuid4().hex}"), http.get("/", headers=alice.headers)]
        deadline = time.monotonic() + 30
        while (health := http.get("/healthz")).status_code == 200 and time.monotonic() < deadline:
            time.sleep(0.2)  # (the dispatcher finds the table gone when it next looks at the queue)
        assert health.status_code == 503 and health.text.startswith("grading stopped: ")
    for answer in answers:
        assert answer.status_code == 500
        assert {k: answer.headers.get(k) for k in SECURITY_HEADERS} == SECURITY_HEADERS
        assert "OperationalError" not in answer.text and "SELECT" not in answer.text  # no detail
    assert live.process.poll() is None


def test_healthz_says_grading_stopped_without_the_databases_words(start_server):
    """/healthz answers anyone: the dispatcher's failure is named there by its kind only;
    its words (the SQL, its parameters, a PostgreSQL host and user) go to the server's log.
    Once the database answers again, grading goes on without a restart."""
    live = start_server()
    with sqlite3.connect(live.db_path) as db:
        db.execute("ALTER TABLE submissions RENAME TO broken")
    with client(live) as http:
        deadline = time.monotonic() + 30
        while (health := http.get("/healthz")).status_code == 200 and time.monotonic() < deadline:
            time.sleep(0.2)
    assert health.status_code == 503 and health.text.startswith("grading stopped: ")
    assert "OperationalError" in health.text  # (its kind: enough to know where to look)
    for detail in ("SQL", "submissions", "parameters", "no such table", "sqlalche.me"):
        assert detail not in health.text, health.text
    deadline = time.monotonic() + 10
    while "no such table: submissions" not in live.stderr() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert "no such table: submissions" in live.stderr()  # the operator still reads why
    # The database back: grading goes on by itself, and /healthz says ok again.
    with sqlite3.connect(live.db_path) as db:
        db.execute("ALTER TABLE broken RENAME TO submissions")
    with client(live) as http:
        deadline = time.monotonic() + 60
        while (health := http.get("/healthz")).status_code != 200 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert health.status_code == 200, health.text
    with client(live, live.tokens["alice"]) as http:
        answer = upload(http, PE, "after.py", sample("correct_vectorized.py"))
        assert graded(http, answer.json()["id"])["report"]["score"] > 0


# --------------------------------------------------------------------------- where it listens


def other_addresses() -> list[str]:
    """This machine's IPv4 addresses but 127.0.0.1 (the kernel's local table), and another
    loopback address (127.0.0.2: always this machine's, never the one bound)."""
    found = {"127.0.0.2"}
    with open("/proc/net/fib_trie") as f:
        lines = f.read().splitlines()
    for previous, line in zip(lines, lines[1:]):
        if line.strip() == "/32 host LOCAL":
            found.add(previous.split()[-1])
    return sorted(found - {"127.0.0.1"})


def test_it_listens_on_loopback_only_by_default(server):
    assert re.match(r"grader serve: listening on http://127\.0\.0\.1:\d+ ", server.listening)
    port = int(server.url.rsplit(":", 1)[1])
    others = other_addresses()
    assert "127.0.0.2" in others
    for address in others:
        with pytest.raises(ConnectionRefusedError), socket.create_connection((address, port), timeout=5):
            pass
    with pytest.raises(OSError), socket.create_connection(("::1", port), timeout=5):  # (refused, or no IPv6)
        pass
    healthy(server)
