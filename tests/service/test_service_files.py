"""What the service writes is its own whatever the umask (issue 34): the SQLite database
that holds every upload, and the -wal and -shm SQLite makes beside it, are 0600 and a folder
the service makes is 0700, whether the database was made by `grader serve` (its default
folder) or by `grader serve-token` (a --db folder), under an operator's umask of 022 or 000;
an existing database that other users could read is made private, and said.

(The tier whose walls are file permissions refuses what other users could reach:
tests/security/test_service_files_unprivileged.py.)
"""

import os
import sqlite3
import stat
import subprocess
import sys

import pytest
from helpers.live_server import client, graded, sample, start, upload
from helpers.paths import PE_TASK


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("umask", [0o022, 0o000], ids=["umask-022", "umask-000"])
@pytest.mark.parametrize("made_by", ["grader serve", "grader serve-token"])
def test_the_database_and_its_wal_and_shm_are_private_whatever_the_umask(tmp_path, umask, made_by):
    folder = tmp_path / "course"
    live = start(str(folder), [PE_TASK], umask=umask, default_db=made_by == "grader serve")
    try:
        with client(live, live.tokens["alice"]) as http:
            answer = upload(http, "positional-encoding", "mine.py", sample("correct_vectorized.py"))
            assert answer.status_code == 202, answer.text
            assert graded(http, answer.json()["id"])["report"]["score"] > 0
        database = live.db_path
        files = {name: mode(database + name) for name in ("", "-wal", "-shm")}  # (the server is running)
        assert files == {"": 0o600, "-wal": 0o600, "-shm": 0o600}, {k: oct(v) for k, v in files.items()}
        if made_by == "grader serve":  # (its default folder; a --db folder that exists is the operator's)
            assert mode(os.path.dirname(database)) == 0o700
    finally:
        live.stop()


def serve_token(*args, cwd, umask=-1):
    return subprocess.run(
        [sys.executable, "-m", "grader", "serve-token", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
        umask=umask,
    )


def test_serve_token_makes_the_database_and_its_folder_private_under_umask_000(tmp_path):
    for args, database in (
        (["--staff", "prof"], tmp_path / "grader-serve" / "service.sqlite"),  # the default
        (
            ["--staff", "prof", "--db", f"sqlite:///{tmp_path}/made/here/service.sqlite"],
            tmp_path / "made" / "here" / "service.sqlite",
        ),  # a --db folder
    ):
        done = serve_token(*args, cwd=tmp_path, umask=0o000)
        assert done.returncode == 0, done.stderr
        assert (mode(database), mode(database.parent)) == (0o600, 0o700)


def test_an_existing_database_open_to_other_users_is_made_private_and_said(tmp_path):
    database = tmp_path / "service.sqlite"
    older = sqlite3.connect(database)  # (as an older grader made it, by the umask: 0644)
    try:
        older.execute("PRAGMA journal_mode=WAL")
        older.execute("CREATE TABLE t (x)")
        older.commit()  # (open still: its -wal and -shm are there, 0644 too)
        made = [database, tmp_path / "service.sqlite-wal", tmp_path / "service.sqlite-shm"]
        assert [mode(p) for p in made] == [0o644] * 3
        done = serve_token("--staff", "prof", "--db", f"sqlite:///{database}", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert [mode(p) for p in made] == [0o600] * 3
        assert f"{', '.join(map(str, made))} could be read by other users; made private" in done.stderr
    finally:
        older.close()
    again = serve_token("--staff", "prof", "--db", f"sqlite:///{database}", cwd=tmp_path)
    assert again.returncode == 0 and "could be read by other users" not in again.stderr
