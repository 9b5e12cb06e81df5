"""The service's own files in the tier whose walls are file permissions (issue 34): where a
worker runs as a user of its own (Gradescope-like machines: root, no namespaces; simulated
here by tests/helpers/container_sim.py, as tests/security/test_unsafe_tiers.py does), `grader
serve` refuses to start while a worker could reach its database: the database's folder
open to other users, or a PostgreSQL server's socket folder; the refusal gives the chmod
that fixes it. The attack it stops: a student's upload reading a classmate's upload out of
the SQLite database or its WAL.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import threading

from helpers.containers import SIMULATOR
from helpers.live_server import LISTENING, client, graded, sample, start, upload
from helpers.paths import PE_SAMPLES
from service.postgres import postgres_cluster  # noqa: F401 (fixture)

PE = "positional-encoding"
SECRET = "SECRET_OF_ALICE_7f3a9c"  # in alice's upload: it must not reach bob's report

# Bob's upload: at import, it opens the database and its WAL and shared memory (absolute
# paths: a worker of this tier sees the machine's filesystem) and says what it got, with
# what it found of a classmate's source. The exception is its report's message.
READER = """
_said = []
for _path in {paths!r}:
    try:
        with open(_path, "rb") as _f:
            _data = _f.read()
    except OSError as _e:
        _said.append(_path.rsplit("/", 1)[-1] + ": " + type(_e).__name__)
    else:
        _at = _data.find(b"SECRET_OF_")
        _said.append(_path.rsplit("/", 1)[-1] + ": read " + repr(_data[_at:_at + 22] if _at >= 0 else b""))
raise RuntimeError("; ".join(_said))
"""


def grader_in(container) -> tuple[str, ...]:
    """The container's grader, run in the simulation (root, Docker's seccomp profile)."""
    return (os.path.join(container["bin"], "python"), SIMULATOR, os.path.join(container["bin"], "grader"))


def serve_args(container, *options: str) -> list[str]:
    return [*grader_in(container), "serve", container["task"], "--port", "0", "--jobs", "1", *options]


def outcome(command: list[str], cwd: str, env: dict | None = None) -> tuple[bool, str]:
    """Whether ``grader serve ...`` started (it listened: then it is stopped) and what it
    said; one that neither listens nor ends is killed (its whole session) and fails."""
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    hung = threading.Timer(180, os.killpg, (process.pid, signal.SIGKILL))
    hung.start()
    said = ""
    try:
        for printed in process.stdout:
            said += printed
            if LISTENING.search(printed):
                process.send_signal(signal.SIGTERM)
                said += process.communicate(timeout=60)[0]
                return True, said
        process.wait()
        assert process.returncode == 2, said[-3000:]  # (refused: exit 2, not a traceback)
        return False, said
    finally:
        hung.cancel()
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def course_folder(container, tmp_path, mode: int) -> str:
    """A folder of the course beside the grader's install (every user may pass /tmp and it)."""
    folder = os.path.join(container["open"], f"course-{tmp_path.name}")
    os.mkdir(folder)
    os.chmod(folder, mode)
    return folder


def test_an_open_database_folder_is_refused_with_its_chmod_and_a_closed_one_starts(
    service_container, tmp_path
):
    folder = course_folder(service_container, tmp_path, 0o755)
    database = f"sqlite:///{folder}/service.sqlite"
    started, said = outcome(
        serve_args(service_container, "--isolation", "unprivileged", "--db", database), folder
    )
    assert not started and f"chmod -R o-rwx {folder}" in said, said
    assert os.listdir(folder) == []  # nothing of it written there
    # The default folder (grader-serve/, made 0700) in that same open course folder starts.
    live = start(
        folder,
        [service_container["task"]],
        "--isolation",
        "unprivileged",
        default_db=True,
        grader=grader_in(service_container),
    )
    assert "in the unprivileged tier" in live.listening
    assert not live.stop()
    os.chmod(folder, 0o700)
    live = start(
        folder,
        [service_container["task"]],
        "--isolation",
        "unprivileged",
        grader=grader_in(service_container),
    )
    assert "in the unprivileged tier" in live.listening
    assert not live.stop()


def test_a_database_in_a_place_every_user_may_write_is_refused_without_closing_that_place(
    service_container, tmp_path
):
    database = f"/tmp/grader-{tmp_path.name}.sqlite"
    command = serve_args(service_container, "--isolation", "unprivileged", "--db", f"sqlite:///{database}")
    started, said = outcome(command, str(tmp_path))
    assert not started and "every user may write in /tmp: give the database" in said, said
    assert "chmod" not in said and not os.path.exists(database)


def test_an_open_task_folder_is_refused_at_start_not_at_each_upload(service_container, tmp_path):
    folder = course_folder(service_container, tmp_path, 0o700)
    open_task = os.path.join(service_container["open"], f"open-task-{tmp_path.name}")
    shutil.copytree(service_container["task"], open_task)
    os.chmod(open_task, 0o755)
    command = serve_args(
        service_container, "--isolation", "unprivileged", "--db", f"sqlite:///{folder}/s.sqlite"
    )
    command[command.index(service_container["task"])] = open_task
    started, said = outcome(command, folder)
    assert not started and f"chmod -R o-rwx {open_task}" in said, said


def test_a_classmates_upload_cannot_be_read_out_of_the_database_or_its_wal(service_container, tmp_path):
    """The attack of the finding, as a course would meet it: the database in an ordinary
    course folder (0755); where the server refuses, the operator runs the chmod it gives."""
    folder = course_folder(service_container, tmp_path, 0o755)
    database = os.path.join(folder, "service.sqlite")

    def serving():
        return start(
            folder,
            [service_container["task"]],
            "--isolation",
            "unprivileged",
            grader=grader_in(service_container),
        )

    try:
        live = serving()
    except AssertionError as refused:  # (start: "grader serve ended (2): ITS STDERR")
        fix = re.search(r"chmod -R o-rwx (\S+)", str(refused))
        assert "ended (2)" in str(refused) and fix, refused
        subprocess.run(["chmod", "-R", "o-rwx", fix.group(1)], check=True)
        live = serving()
    try:
        with open(os.path.join(PE_SAMPLES, "correct_vectorized.py"), "rb") as f:
            alices = f.read() + f"\nSECRET = {SECRET!r}\n".encode()
        with client(live, live.tokens["alice"]) as http:
            answer = upload(http, PE, "mine.py", alices)
            assert answer.status_code == 202, answer.text
            assert graded(http, answer.json()["id"])["report"]["score"] > 0
        paths = [database, database + "-wal", database + "-shm"]
        bobs = READER.format(paths=paths).encode() + sample("correct_vectorized.py")
        with client(live, live.tokens["bob"]) as http:
            answer = upload(http, PE, "mine.py", bobs)
            assert answer.status_code == 202, answer.text
            report = json.dumps(graded(http, answer.json()["id"])["report"])
    finally:
        live.stop()
    assert SECRET not in report
    said = "service.sqlite: PermissionError; service.sqlite-wal: PermissionError; service.sqlite-shm: PermissionError"
    assert said in report, report[-3000:]


def test_a_postgresql_socket_folder_open_to_other_users_is_refused(
    service_container,
    postgres_cluster,  # noqa: F811
    tmp_path,
):
    folder = course_folder(service_container, tmp_path, 0o700)
    url = postgres_cluster.new_database()
    sockets = postgres_cluster.folder  # (the cluster's own folder, 0700: only root and postgres pass it)
    by_pghost = url.replace(f"host={sockets}&", "")  # (the socket folder from PGHOST instead)
    assert by_pghost != url
    ways = {
        "the URL's host": (url, None),
        "PGHOST": (by_pghost, {**os.environ, "PGHOST": sockets}),
    }
    try:
        for how, (db, env) in ways.items():
            started, said = outcome(
                serve_args(service_container, "--isolation", "unprivileged", "--db", db), folder, env
            )
            assert started, (how, said[-3000:])
        os.chmod(sockets, 0o755)  # (as Debian's /var/run/postgresql is open to every user)
        for how, (db, env) in ways.items():
            started, said = outcome(
                serve_args(service_container, "--isolation", "unprivileged", "--db", db), folder, env
            )
            assert not started and f"chmod -R o-rwx {sockets}" in said, (how, said[-3000:])
    finally:
        os.chmod(sockets, 0o700)
        postgres_cluster.drop_database(url)
