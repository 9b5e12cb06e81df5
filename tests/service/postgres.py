"""A throwaway PostgreSQL cluster for the service's tests (and bench/serve_speed.py): Debian's
``postgresql`` package's own binaries, a cluster made in a temporary folder, listening only
on a Unix socket there (no TCP port: nothing else on the machine can reach it or clash with
it), a fresh database per test, removed at the end.

PostgreSQL refuses to run as root: as root, the cluster belongs to the ``postgres`` user the
package creates, and its commands run as that user (runuser). Without PostgreSQL the fixture
skips, unless GRADER_REQUIRE_POSTGRES=1 (as .ci/run sets it), when it fails.

Fixtures: ``postgres_cluster`` (one per test session) and ``postgres_url`` (a fresh,
empty database in it, as a SQLAlchemy URL). Import both into a test module that uses them.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid

import pytest

REQUIRE = "GRADER_REQUIRE_POSTGRES"
PORT = 5432  # (only names the socket file, in the cluster's own folder)


def bin_folder() -> str | None:
    """Where PostgreSQL's server binaries are (the newest Debian version), or None."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(p.split("/")[-3]) if p.split("/")[-3].isdigit() else 0,
    )
    if found:
        return os.path.dirname(found[-1])
    initdb = shutil.which("initdb")
    return os.path.dirname(os.path.realpath(initdb)) if initdb else None


class Cluster:
    """A PostgreSQL cluster of its own: ``start()``, ``new_database()``, ``stop()``."""

    def __init__(self, binaries: str):
        self.binaries = binaries
        # /tmp, not pytest's folders: a socket's path must be short, and the postgres user
        # must be able to reach the folder.
        self.folder = tempfile.mkdtemp(prefix="grader-pg-", dir="/tmp")
        self.data = os.path.join(self.folder, "data")
        self.log = os.path.join(self.folder, "server.log")
        self.as_root = os.geteuid() == 0
        self.running = False
        if self.as_root:
            owner = pwd.getpwnam("postgres")
            os.chown(self.folder, owner.pw_uid, owner.pw_gid)

    def _run(self, *command: str) -> None:
        argv = [os.path.join(self.binaries, command[0]), *command[1:]]
        if self.as_root:
            argv = ["runuser", "-u", "postgres", "--", *argv]
        done = subprocess.run(argv, capture_output=True, text=True, cwd=self.folder, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(
                f"{command[0]} failed ({done.returncode}): {done.stdout}{done.stderr}{self._log()}"
            )

    def _log(self) -> str:
        try:
            with open(self.log, encoding="utf-8", errors="replace") as f:
                return "\nserver log:\n" + f.read()[-3000:]
        except OSError:
            return ""

    def start(self) -> Cluster:
        # trust: only this folder's socket accepts connections, and only root and the
        # postgres user can reach it. --no-sync: initdb's own files need not survive a power cut.
        self._run("initdb", "-D", self.data, "-U", "postgres", "-A", "trust", "-E", "UTF8",
                  "--locale=C", "--no-sync")  # fmt: skip
        options = f"-k {self.folder} -c listen_addresses='' -p {PORT} -c max_connections=200"
        self._run("pg_ctl", "-D", self.data, "-l", self.log, "-o", options, "-w", "-t", "60", "start")
        self.running = True
        return self

    def url(self, database: str = "postgres") -> str:
        """A SQLAlchemy URL of a database of this cluster (psycopg 3, over the socket)."""
        return f"postgresql+psycopg://postgres@/{database}?host={self.folder}&port={PORT}"

    def new_database(self) -> str:
        """A fresh, empty database; its URL."""
        import psycopg

        name = f"grader_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(host=self.folder, port=PORT, user="postgres", dbname="postgres",
                             autocommit=True) as db:  # fmt: skip
            db.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def drop_database(self, url: str, force: bool = True) -> None:
        """Drop a database (its open connections too, with ``force``): the database gone."""
        import psycopg
        from sqlalchemy.engine import make_url

        name = make_url(url).database
        with psycopg.connect(host=self.folder, port=PORT, user="postgres", dbname="postgres",
                             autocommit=True) as db:  # fmt: skip
            db.execute(f"DROP DATABASE IF EXISTS {name}{' WITH (FORCE)' if force else ''}")

    def stop(self) -> None:
        if self.running:
            self.running = False
            try:
                self._run("pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop")
            except (RuntimeError, subprocess.TimeoutExpired):
                pass
        shutil.rmtree(self.folder, ignore_errors=True)


def start_cluster() -> Cluster | None:
    """A started cluster, or None when PostgreSQL is not installed here."""
    binaries = bin_folder()
    if binaries is None:
        return None
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return None
    return Cluster(binaries).start()


_shared: list[Cluster] = []  # one cluster per session, whichever module's fixture asks first


@pytest.fixture(scope="session")
def postgres_cluster():
    if not _shared:
        cluster = start_cluster()
        if cluster is None:
            why = "PostgreSQL is not installed (Debian: apt-get install postgresql)"
            if os.environ.get(REQUIRE) == "1":
                pytest.fail(f"{why}, and {REQUIRE}=1")
            pytest.skip(why)
        _shared.append(cluster)
    yield _shared[0]
    while _shared:  # (session teardown: stopped once, even if two modules imported this)
        _shared.pop().stop()


@pytest.fixture
def postgres_url(postgres_cluster):
    """A fresh, empty database of the session's cluster, as a SQLAlchemy URL."""
    url = postgres_cluster.new_database()
    yield url
    postgres_cluster.drop_database(url)
