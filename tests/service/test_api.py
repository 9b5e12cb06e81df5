"""The service's API as a course's scripts use it, and as a hostile student pushes it: a real
`grader serve` on loopback (tests/helpers/live_server.py), two students and a member of staff;
the routes' answers that need no server around them (whose uploads one sees, /healthz, a
session that is no token, a task's own attempts) from its app in process (``app``,
``start_app``: tests/helpers/in_process.py).

An upload is graded as `grader check` grades the same file for a student; a person sees only
their own uploads (another's id, a made-up one and one that is no id are the same 404); no
token, or a malformed one, is a 401; --attempts holds under uploads sent at once; --deadline
marks uploads late; staff regrade, and export what `grader export` writes for the same
grades; a stopped server leaves no process behind. (The walls around an upload itself:
test_upload_walls.py.)
"""

import concurrent.futures
import json
import os
import re
import shutil
import time
import uuid

import pytest
from helpers.cli import run_cli
from helpers.live_server import (
    SQUARE_YAML,
    STAFF,
    client,
    graded,
    healthy,
    raw,
    rows,
    sample,
    sign_in,
    upload,
)
from helpers.paths import PE_SAMPLES, PE_TASK
from helpers.tasks import make_task

PE = "positional-encoding"
CORRECT, WRONG = "correct_vectorized.py", "mistake_sin_cos_swapped.py"
# Each student's uploads, in order (the last is their latest: what export and regrade take).
UPLOADS = {"alice": [WRONG, CORRECT], "bob": [CORRECT, WRONG]}
TINY = b"x = 1\n"


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


def upload_all(served) -> dict:
    """Every upload of UPLOADS made through the API: (student, index) -> (file, public id)."""
    made = {}
    for student, names in UPLOADS.items():
        with client(served, served.tokens[student]) as http:
            for index, name in enumerate(names):
                answer = upload(http, PE, name, sample(name))
                assert answer.status_code == 202, answer.text
                assert answer.json()["status"] == "queued"
                made[student, index] = (name, answer.json()["id"])
    return made


@pytest.fixture(scope="module")
def uploaded(server):
    return upload_all(server)


@pytest.fixture(scope="module")
def app_uploaded(app):
    """The same uploads, to the app in process."""
    return upload_all(app)


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
            name = {"csv": "grades", "canvas": "canvas"}[kind]  # as grader export names its files
            assert answer.headers["content-disposition"] == f'attachment; filename="{name}-{PE}.csv"'
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


def test_a_person_sees_only_their_own_uploads(app, app_uploaded):
    _, alices = app_uploaded["alice", 0]
    with client(app, app.tokens["bob"]) as bob, client(app, app.tokens["alice"]) as alice:
        theirs = bob.get(f"/api/submissions/{alices}")
        made_up = bob.get(f"/api/submissions/{uuid.uuid4().hex}")
        assert theirs.status_code == made_up.status_code == 404
        assert theirs.json() == made_up.json()  # nothing tells one from the other
        assert alice.get(f"/api/submissions/{alices}").status_code == 200
    with client(app, app.tokens[STAFF]) as staff:
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


def test_healthz_says_ok(app):
    with client(app) as http:
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


def test_a_browser_session_is_no_api_token(app):
    alice = sign_in(app, "alice")
    with client(app) as http:
        answer = http.get(f"/api/submissions/{uuid.uuid4().hex}", headers=alice.headers)
        assert answer.status_code == 401
        answer = http.get(
            f"/api/submissions/{uuid.uuid4().hex}", headers={"authorization": f"Bearer {alice.cookie}"}
        )
        assert answer.status_code == 401


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


def test_a_tasks_own_attempts_beat_the_servers(start_app, tmp_path):
    """task.yaml's attempts: limits that task (here 1, under --attempts 3); the other task
    keeps the server's limit, and the home page counts each."""
    once = make_task(tmp_path / "once", SQUARE_YAML.replace("id: square", "id: once") + "attempts: 1\n")
    app = start_app("--attempts", "3", tasks=[PE_TASK, once])
    with client(app, app.tokens["alice"]) as http:
        square = b"def square(x):\n    return x * x\n"
        assert [upload(http, "once", "s.py", square).status_code for _ in range(2)] == [202, 429]
        assert [upload(http, PE, "a.py", TINY).status_code for _ in range(4)] == [202, 202, 202, 429]
    browser = sign_in(app, "alice")
    with client(app) as http:
        home = http.get("/", headers=browser.headers).text
    assert home.count("(0 attempts left)") == 2, home
    assert home.count("You have used every attempt at this task") == 2 and 'action="/upload"' not in home
    healthy(app)


def test_a_grading_upload_shows_how_long_it_has_been_graded(start_server):
    """Progress while grading: the API and the attempt's page say how long this upload has
    been graded and, once the task has been graded 5 times, how long its gradings take."""
    live = start_server()
    slow = sample("correct_vectorized.py").replace(
        b"import numpy as np", b"import numpy as np\nimport time\ntime.sleep(4)", 1
    )
    with client(live, live.tokens["alice"]) as http:
        for k in range(5):
            graded(http, upload(http, PE, f"before_{k}.py", sample("correct_vectorized.py")).json()["id"])
        public_id = upload(http, PE, "slow.py", slow).json()["id"]
        deadline = time.monotonic() + 60
        while (status := http.get(f"/api/submissions/{public_id}").json())["status"] != "grading":
            assert status["status"] == "queued" and time.monotonic() < deadline, status
            time.sleep(0.1)
        assert status["grading_seconds"] >= 0 and status["typical_seconds"] > 0, status
    browser = sign_in(live, "alice")
    with client(live) as http:
        page = http.get(f"/attempts/{public_id}", headers=browser.headers).text
    assert re.search(r"being graded now \(for \d+ s; gradings of this task take about \d+ s\)", page), page
    with client(live, live.tokens["alice"]) as http:
        assert graded(http, public_id)["status"] == "done"


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
        nobody = http.post(
            "/staff/regrade", data={"csrf": staff.csrf, "person": "nobody"}, headers=staff.headers
        )
        assert nobody.status_code == 404 and "no such person" in nobody.text
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


@pytest.mark.parametrize(
    "url, why",
    [
        ("nonsense", "Could not parse"),
        ("mysql://x/y", "no driver for it here (MySQLdb)"),
        ("postgresql://prof:hunter2@127.0.0.1:1/course", "connection"),
        ("sqlite:////proc/no-folder-here/x.db", "unable to open database file"),
    ],
)
def test_a_database_it_cannot_open_is_the_operators_error_named_with_db(url, why, tmp_path):
    """A --db that names no database this machine reaches: exit 2, the URL said back (never
    its password), why, and what to give; no traceback, no 'internal error'."""
    for command in (["serve", PE_TASK, "--port", "0"], ["serve-token", "alice"]):
        done = run_cli(*command, "--db", url)
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith(f"grader: --db {url.replace('hunter2', '***')}: "), done.stderr
        assert why in done.stderr and "Give sqlite:///PATH or postgresql://" in done.stderr, done.stderr
        assert "hunter2" not in done.stderr and "Traceback" not in done.stderr


def test_the_roster_says_who_may_sign_in_and_staff_trials_are_no_grades(start_server):
    """Restarted with a roster that drops bob: his token and session end (his grades stay on
    the class page), and the export holds the roster's students, never a member of staff's
    trial upload."""
    live = start_server()
    bob = sign_in(live, "bob")
    with client(live, live.tokens["bob"]) as http:
        graded(http, upload(http, PE, "b.py", sample("correct_vectorized.py")).json()["id"])
    with client(live, live.tokens[STAFF]) as http:
        graded(http, upload(http, PE, "trial.py", sample("correct_vectorized.py")).json()["id"])
    live.stop()
    again = start_server(folder=live.folder, students=("alice",))
    assert (
        "1 student no longer on the roster can no longer sign in" in again.stderr()
        and "bob" in again.stderr()
    )
    with client(again, live.tokens["bob"]) as http:
        assert upload(http, PE, "b2.py", TINY).status_code == 401
    with client(again) as http:
        home = http.get("/", headers=bob.headers).text
        assert "<h1>Sign in</h1>" in home and "Your tasks" not in home  # the session ended too
    staff = sign_in(again, STAFF)
    with client(again) as http:
        assert "bob" in http.get("/staff", headers=staff.headers).text  # his grades are kept
        exported = http.get(f"/staff/export?format=csv&task={PE}", headers=staff.headers).text
    assert "bob" in exported and STAFF not in exported


def test_a_sqlite_databases_folder_is_made_as_the_defaults_is(tmp_path):
    url = f"sqlite:///{tmp_path}/course/term-1/service.sqlite"
    done = run_cli("serve-token", "--staff", "prof", "--db", url)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "course" / "term-1" / "service.sqlite").is_file()
    assert oct((tmp_path / "course" / "term-1").stat().st_mode & 0o777) == "0o700"  # (its own folder)
    assert f"in {url}" in done.stderr  # which database the token is for


def test_grading_on_a_dask_cluster_gives_the_same_reports(start_server):
    """--dask ADDRESS: the uploads are graded by the cluster's workers (sent the task's
    files, as grader batch --dask sends them), with the reports grader check gives."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        live = start_server("--dask", cluster.scheduler_address)
        with client(live, live.tokens["alice"]) as http:
            for name in ("correct_vectorized.py", "mistake_sin_cos_swapped.py"):
                report = graded(http, upload(http, PE, name, sample(name)).json()["id"])["report"]
                done = run_cli("check", PE_TASK, os.path.join(PE_SAMPLES, name), "--format", "json")
                assert essentials(report) == essentials(json.loads(done.stdout)), name
        assert "grade_bytes" in cluster.scheduler.task_prefixes  # (the cluster graded them)
        live.stop()


SIGINT_ITSELF = b"""import numpy as np
import signal


def sinusoidal_pe(max_len, d_model, base=10000.0):
    signal.raise_signal(signal.SIGINT)
    return np.zeros((max_len, d_model))


def add_positional_encoding(x, base=10000.0):
    signal.raise_signal(signal.SIGINT)
    return np.asarray(x, dtype=float)
"""


def test_a_file_that_interrupts_itself_gets_the_score_grader_check_gives(server, tmp_path):
    """The service's pool ignores SIGINT (Ctrl-C is the server's); a student's code still
    meets it as Python's default, so its score is the one grader check gives."""
    path = tmp_path / "interrupts.py"
    path.write_bytes(SIGINT_ITSELF)
    done = run_cli("check", PE_TASK, str(path), "--format", "json")
    with client(server, server.tokens["alice"]) as http:
        report = graded(http, upload(http, PE, "interrupts.py", SIGINT_ITSELF).json()["id"])["report"]
    assert essentials(report) == essentials(json.loads(done.stdout))
