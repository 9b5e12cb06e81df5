"""The service's database (SQLite by default, PostgreSQL for a course that outgrows one
machine): who may sign in, their sessions, every accepted upload and its grading. The queue
is the submissions table; a claim moves one row from queued to grading in one transaction,
and a result is recorded only by the server that claimed it, so that after a crash (kill -9
at any moment) a restart grades every accepted upload exactly once. Records are plain data."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import statistics
import time
import uuid
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import sqlalchemy
from sqlalchemy import Engine, and_, create_engine, event, func, select, update
from sqlalchemy.engine import Connection

from grader.records.wording import counted
from grader.service import tokens
from grader.service.limits import ClientLimits
from grader.service.schema import DONE, GRADING, QUEUED, contents, people, sessions, submissions
from grader.service.schema import tokens as token_table

SESSION_SECONDS = 12 * 3600  # a browser signs in again after this


@dataclass(frozen=True)
class Person:
    id: str
    name: str
    staff: bool


@dataclass(frozen=True)
class Session:
    person: Person
    csrf: str


@dataclass(frozen=True)
class Submission:
    """An upload and how far its grading got (no bytes: see Claimed)."""

    public_id: str
    person: str
    task: str
    filename: str
    sha256: str
    uploaded: float
    late: bool
    status: str
    started: float | None
    finished: float | None
    score: float | None
    max_score: float | None
    report: dict | None  # the staff report (result.py's dict), once done


class OverBudget(Exception):
    """An upload refused by one of the ClientLimits: the words for its sender, and how many
    seconds until it would be taken (None: not by waiting)."""

    def __init__(self, message: str, retry_after: int | None = None):
        super().__init__(message)
        self.retry_after = retry_after


@dataclass(frozen=True)
class Claimed:
    """A queued upload this server now grades: what a pool process needs."""

    id: int
    public_id: str
    person: str
    task: str
    filename: str
    content: bytes


class Store:
    def __init__(self, url: str):
        self.url = url
        self.sqlite_path = sqlite_file(url)  # (its disk is the one free_bytes reads)
        sqlite = url.startswith("sqlite")
        self.engine: Engine = create_engine(
            url,
            connect_args={"timeout": 30, "check_same_thread": False} if sqlite else {},
            pool_pre_ping=not sqlite,
        )
        if sqlite:
            event.listen(self.engine, "connect", _sqlite_settings)

    def close(self) -> None:
        self.engine.dispose()

    def upgrade(self) -> None:
        """Create or migrate the tables (Alembic, migrations/), to the newest revision."""
        from alembic import command
        from alembic.config import Config

        config = Config()
        config.set_main_option("script_location", os.path.join(os.path.dirname(__file__), "migrations"))
        with self.engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, "head")

    def _begin(self) -> Any:
        return self.engine.begin()

    # -- people and their tokens
    def enrol(self, person_id: str, name: str = "", staff: bool = False) -> None:
        """Add a person, or update their name and role."""
        with self._begin() as db:
            known = db.execute(select(people.c.id).where(people.c.id == person_id)).first()
            if known:
                db.execute(update(people).where(people.c.id == person_id).values(name=name, staff=staff))
            else:
                db.execute(people.insert().values(id=person_id, name=name, staff=staff))

    def person(self, person_id: str) -> Person | None:
        with self._begin() as db:
            row = db.execute(select(people).where(people.c.id == person_id)).first()
        return Person(row.id, row.name, bool(row.staff)) if row else None

    def everyone(self) -> list[Person]:
        with self._begin() as db:
            rows = db.execute(select(people).order_by(people.c.id)).all()
        return [Person(r.id, r.name, bool(r.staff)) for r in rows]

    def issue_token(self, person_id: str) -> str:
        """A new sign-in token for a person (only its digest is kept)."""
        secret = tokens.new_secret()
        with self._begin() as db:
            db.execute(
                token_table.insert().values(
                    digest=tokens.digest(secret), person=person_id, created=time.time()
                )
            )
        return secret

    def revoke_tokens(self, person_id: str) -> None:
        """Every sign-in token of a person ended, and with them the sessions they opened."""
        with self._begin() as db:
            db.execute(token_table.delete().where(token_table.c.person == person_id))

    def person_by_token(self, presented: object) -> Person | None:
        if not tokens.plausible(presented):
            return None
        assert isinstance(presented, str)
        wanted = tokens.digest(presented)
        with self._begin() as db:
            row = db.execute(
                select(token_table.c.digest, people)
                .join(people, people.c.id == token_table.c.person)
                .where(token_table.c.digest == wanted)
            ).first()
        if row is None or not tokens.same(row.digest, wanted):
            return None
        return Person(row.id, row.name, bool(row.staff))

    # -- browser sessions
    def open_session(
        self, person_id: str, token: str, keep: int = ClientLimits.sessions_per_person
    ) -> tuple[str, str]:
        """A new session's cookie value and CSRF secret, for the sign-in ``token`` it was
        opened with (the session lasts only as long as that token's row). A person has at
        most ``keep`` sessions: signing in again and again makes no more rows, it signs the
        oldest browser out."""
        cookie = tokens.new_secret()
        csrf = tokens.csrf_of(cookie)
        with self._begin() as db:
            db.execute(sessions.delete().where(sessions.c.expires < time.time()))
            kept = (
                select(sessions.c.digest)
                .where(sessions.c.person == person_id)
                .order_by(sessions.c.expires.desc())
                .limit(max(keep - 1, 0))
            )
            db.execute(
                sessions.delete().where(
                    and_(sessions.c.person == person_id, sessions.c.digest.not_in(kept.scalar_subquery()))
                )
            )
            db.execute(
                sessions.insert().values(
                    digest=tokens.digest(cookie),
                    person=person_id,
                    csrf=tokens.digest(csrf),  # (a record only: the secret is made from the cookie)
                    expires=time.time() + SESSION_SECONDS,
                    token=tokens.digest(token),
                )
            )
        return cookie, csrf

    def session(self, cookie: object) -> Session | None:
        if not tokens.plausible(cookie):
            return None
        assert isinstance(cookie, str)
        wanted = tokens.digest(cookie)
        with self._begin() as db:
            row = db.execute(
                select(sessions.c.digest, sessions.c.expires, people)
                .join(people, people.c.id == sessions.c.person)
                # (an inner join: a session whose token was deleted, or that names none, is none)
                .join(
                    token_table,
                    and_(token_table.c.digest == sessions.c.token, token_table.c.person == sessions.c.person),
                )
                .where(sessions.c.digest == wanted)
            ).first()
        if row is None or not tokens.same(row.digest, wanted) or row.expires < time.time():
            return None
        return Session(Person(row.id, row.name, bool(row.staff)), tokens.csrf_of(cookie))

    def close_session(self, cookie: str) -> None:
        with self._begin() as db:
            db.execute(sessions.delete().where(sessions.c.digest == tokens.digest(cookie)))

    # -- uploads
    def accept(
        self,
        person_id: str,
        task: str,
        filename: str,
        content: bytes,
        late: bool,
        limits: ClientLimits | None = None,
    ) -> str:
        """Store an upload, queued; its public id. Committed before this returns: an upload
        the caller then acknowledges is never lost. Its bytes are stored once however often
        they are uploaded. With ``limits``, an upload past a person's budget (their rate,
        their uploads or distinct bytes of this task) is OverBudget, counted in the same
        transaction as the insert."""
        public_id = uuid.uuid4().hex
        sha256 = hashlib.sha256(content).hexdigest()
        now = time.time()
        with self._begin() as db:
            if limits is not None:
                _within_budget(db, limits, person_id, task, sha256, len(content), now)
            _store_once(db, sha256, content)
            db.execute(
                submissions.insert().values(
                    public_id=public_id,
                    person=person_id,
                    task=task,
                    filename=filename,
                    sha256=sha256,
                    uploaded=now,
                    late=late,
                    status=QUEUED,
                )
            )
        return public_id

    def free_bytes(self) -> int | None:
        """Free space on the disk that holds the database (SQLite); None where this machine
        cannot tell (a database server's disk)."""
        if self.sqlite_path is None:
            return None
        folder = os.path.dirname(os.path.abspath(self.sqlite_path))
        try:
            return shutil.disk_usage(folder).free
        except OSError:
            return None

    def attempts(self, person_id: str, task: str) -> int:
        with self._begin() as db:
            return int(
                db.execute(
                    select(func.count())
                    .select_from(submissions)
                    .where(and_(submissions.c.person == person_id, submissions.c.task == task))
                ).scalar_one()
            )

    def submission(self, public_id: str) -> Submission | None:
        with self._begin() as db:
            row = db.execute(_listed().where(submissions.c.public_id == public_id)).first()
        return _submission(row) if row else None

    def submissions_of(self, person_id: str) -> list[Submission]:
        with self._begin() as db:
            rows = db.execute(
                _listed(reports=False)
                .where(submissions.c.person == person_id)
                .order_by(submissions.c.id.desc())
            ).all()
        return [_submission(r) for r in rows]

    def latest(self, reports: bool = False) -> dict[tuple[str, str], Submission]:
        """Each person's latest upload of each task (with their reports, if asked)."""
        newest = (
            select(func.max(submissions.c.id).label("id"))
            .group_by(submissions.c.person, submissions.c.task)
            .subquery()
        )
        with self._begin() as db:
            rows = db.execute(_listed(reports).where(submissions.c.id.in_(select(newest.c.id)))).all()
        return {(r.person, r.task): _submission(r) for r in rows}

    def position(self, public_id: str) -> int | None:
        """How many uploads the fair queue grades before this queued one if no one else
        uploads meanwhile (None: not queued). Turns go round the people waiting, least
        recently served first, one upload each per round: a flood of another student's
        uploads is at most one ahead of someone's first."""
        with self._begin() as db:
            row = db.execute(
                select(submissions.c.person, submissions.c.status).where(submissions.c.public_id == public_id)
            ).first()
            if row is None or row.status != QUEUED:
                return None
            waiting = db.execute(
                select(submissions.c.person, submissions.c.public_id)
                .where(submissions.c.status == QUEUED)
                .order_by(submissions.c.id)
            ).all()
            queues: dict[str, list[str]] = {}  # each person's queued uploads, oldest first
            first: dict[str, int] = {}  # where each person's oldest stands in the queue
            for index, (person, queued_id) in enumerate(waiting):
                first.setdefault(person, index)
                queues.setdefault(person, []).append(queued_id)
            served = _last_served(db, list(queues))
        if row.person not in queues or public_id not in queues[row.person]:
            return None  # (graded meanwhile)
        rank = queues[row.person].index(public_id)  # this person's uploads before it
        turns = sorted(queues, key=lambda p: (served.get(p) or 0.0, first[p]))  # as _fair_choice
        mine = turns.index(row.person)
        # in each round up to ``rank`` (this one's), those before this person in the turns
        # take one upload each, those after take one in each earlier round
        return rank + sum(
            min(len(queues[p]), rank + 1 if i < mine else rank)
            for i, p in enumerate(turns)
            if p != row.person
        )

    # -- the queue
    def requeue_abandoned(self) -> int:
        """Uploads a server was grading when it died go back to the queue (one server per
        database: called at its start)."""
        with self._begin() as db:
            done = db.execute(
                update(submissions)
                .where(submissions.c.status == GRADING)
                .values(status=QUEUED, claimed_by=None, started=None)
            )
        return int(done.rowcount or 0)

    def requeue(self, claimed_id: int, server: str) -> None:
        """An upload this server claimed goes back to the queue (its pool broke)."""
        with self._begin() as db:
            db.execute(
                update(submissions)
                .where(
                    and_(
                        submissions.c.id == claimed_id,
                        submissions.c.status == GRADING,
                        submissions.c.claimed_by == server,
                    )
                )
                .values(status=QUEUED, claimed_by=None, started=None)
            )

    def claim_next(self, server: str, tasks: Collection[str] | None = None) -> Claimed | None:
        """The next upload to grade, fairly: no one has two graded at once, and among those
        waiting, whoever was served least recently goes first (a flood of one student's
        uploads takes one grading slot, never the others' turns); None when none waits.
        Only uploads of ``tasks`` (the tasks this server grades; None: any): another task's
        wait for a server that grades it."""
        with self._begin() as db:
            chosen = _fair_choice(db, None if tasks is None else list(tasks))
            if chosen is None:
                return None
            claimed = db.execute(
                update(submissions)
                .where(and_(submissions.c.id == chosen, submissions.c.status == QUEUED))
                .values(status=GRADING, claimed_by=server, started=time.time())
            )
            if not claimed.rowcount:
                return None
            row = db.execute(
                select(
                    submissions.c.id,
                    submissions.c.public_id,
                    submissions.c.person,
                    submissions.c.task,
                    submissions.c.filename,
                    contents.c.content,
                )
                .join(contents, contents.c.sha256 == submissions.c.sha256)
                .where(submissions.c.id == chosen)
            ).one()
        return Claimed(row.id, row.public_id, row.person, row.task, row.filename, bytes(row.content))

    def finish(self, claimed_id: int, server: str, report: dict) -> bool:
        """Record a result, once: only the server that claimed the upload, only while it is
        still being graded (a result that comes after a restart requeued it is dropped)."""
        with self._begin() as db:
            done = db.execute(
                update(submissions)
                .where(
                    and_(
                        submissions.c.id == claimed_id,
                        submissions.c.status == GRADING,
                        submissions.c.claimed_by == server,
                    )
                )
                .values(
                    status=DONE,
                    finished=time.time(),
                    report=json.dumps(report),
                    score=float(report.get("score", 0.0)),
                    max_score=float(report.get("max_score", 0.0)),
                )
            )
        return bool(done.rowcount)

    def regrade(self, person_id: str | None = None, task: str | None = None) -> int:
        """Queue again the latest upload of each person and task (one person's, one task's,
        or everyone's): after a task change. How many were queued."""
        ids = [
            s_id
            for (person, task_id), s_id in self._latest_ids().items()
            if (person_id is None or person == person_id) and (task is None or task_id == task)
        ]
        if not ids:
            return 0
        with self._begin() as db:
            done = db.execute(
                update(submissions)
                .where(and_(submissions.c.id.in_(ids), submissions.c.status == DONE))
                .values(status=QUEUED, claimed_by=None, started=None, finished=None, report=None)
            )
        return int(done.rowcount or 0)

    def _latest_ids(self) -> dict[tuple[str, str], int]:
        with self._begin() as db:
            rows = db.execute(
                select(submissions.c.person, submissions.c.task, func.max(submissions.c.id)).group_by(
                    submissions.c.person, submissions.c.task
                )
            ).all()
        return {(r[0], r[1]): int(r[2]) for r in rows}

    def typical_seconds(self, task: str, last: int = 20, enough: int = 5) -> float | None:
        """The median time the last gradings of this task took: what a student waiting on a
        grading is told to expect. None below ``enough`` gradings, where the median would
        be one other student's grading time."""
        took = submissions.c.finished - submissions.c.started
        with self._begin() as db:
            rows = db.execute(
                select(took)
                .where(
                    submissions.c.task == task,
                    submissions.c.status == DONE,
                    submissions.c.started.is_not(None),
                )
                .order_by(submissions.c.finished.desc())
                .limit(last)
            ).all()
        return statistics.median(float(r[0]) for r in rows) if len(rows) >= enough else None

    def counts(self) -> dict[str, int]:
        with self._begin() as db:
            rows = db.execute(select(submissions.c.status, func.count()).group_by(submissions.c.status)).all()
        return {status: int(n) for status, n in rows}


def sqlite_file(url: str) -> str | None:
    """The SQLite database file a URL names (None: another database, or in memory)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except ArgumentError:
        return None  # (said by whoever opens it)
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    if parsed.query.get("uri"):
        return None  # (a file: URI, as SQLite reads it: left to SQLite)
    return parsed.database


def _store_once(db: Connection, sha256: str, content: bytes) -> None:
    """The bytes under their SHA-256, unless they are there already (two servers storing the
    same new bytes at once: one row)."""
    from sqlalchemy.dialects import postgresql, sqlite

    insert = postgresql.insert if db.dialect.name == "postgresql" else sqlite.insert
    statement: Any = insert(contents).values(sha256=sha256, content=content, size=len(content))
    db.execute(statement.on_conflict_do_nothing(index_elements=["sha256"]))


def _within_budget(
    db: Connection, limits: ClientLimits, person: str, task: str, sha256: str, size: int, now: float
) -> None:
    """OverBudget when this upload would take a person past a limit (the database counts:
    what every server of it sees)."""
    mine = submissions.c.person == person
    recent = db.execute(
        select(submissions.c.uploaded)
        .where(and_(mine, submissions.c.uploaded > now - 60))
        .order_by(submissions.c.uploaded)
    ).all()
    if len(recent) >= limits.uploads_per_minute:
        wait = int(recent[-limits.uploads_per_minute][0] + 60 - now) + 1
        raise OverBudget(
            f"you have uploaded {counted(len(recent), 'time')} in the last minute; this service "
            f"takes at most {limits.uploads_per_minute} a minute: try again in {counted(wait, 'second')}",
            retry_after=wait,
        )
    this_task = and_(mine, submissions.c.task == task)
    made = int(db.execute(select(func.count()).select_from(submissions).where(this_task)).scalar_one())
    if made >= limits.uploads_per_task:
        raise OverBudget(
            f"you have uploaded {counted(made, 'time')} at {task}, as many as this service takes "
            "of one task: ask your instructor"
        )
    stored = select(submissions.c.sha256).where(this_task)
    if db.execute(select(submissions.c.id).where(and_(this_task, submissions.c.sha256 == sha256))).first():
        return  # (the same bytes again: nothing more is stored)
    held = int(
        db.execute(
            select(func.coalesce(func.sum(contents.c.size), 0)).where(contents.c.sha256.in_(stored))
        ).scalar_one()
    )
    if held + size > limits.upload_mib_per_task << 20:
        raise OverBudget(
            f"your uploads of {task} already hold {held / (1 << 20):.1f} MiB of distinct files; this "
            f"service keeps at most {limits.upload_mib_per_task} MiB a person and task: ask your instructor"
        )


def _fair_choice(db: Connection, tasks: list[str] | None) -> int | None:
    busy = {r[0] for r in db.execute(select(submissions.c.person).where(submissions.c.status == GRADING))}
    queued = submissions.c.status == QUEUED
    if tasks is not None:
        queued = and_(queued, submissions.c.task.in_(tasks))
    waiting = db.execute(
        select(submissions.c.id, submissions.c.person).where(queued).order_by(submissions.c.id)
    ).all()
    first_of: dict[str, int] = {}
    for row in waiting:
        if row.person not in busy:
            first_of.setdefault(row.person, row.id)
    if not first_of:
        return None
    served = _last_served(db, list(first_of))
    person = min(first_of, key=lambda p: (served.get(p) or 0.0, first_of[p]))
    return first_of[person]


def _last_served(db: Connection, persons: list[str]) -> dict[str, float | None]:
    """When each person's latest grading began (the fair queue's turns: least recent first)."""
    return dict(
        db.execute(
            select(submissions.c.person, func.max(submissions.c.started))
            .where(submissions.c.person.in_(persons))
            .group_by(submissions.c.person)
        ).all()
    )


def _listed(reports: bool = True) -> Any:
    """The columns of a Submission; without ``reports``, its report left out (None): a list
    of a person's hundreds of uploads need not read each one's report."""
    c = submissions.c
    report = c.report if reports else sqlalchemy.null().label("report")
    return select(
        c.public_id,
        c.person,
        c.task,
        c.filename,
        c.sha256,
        c.uploaded,
        c.late,
        c.status,
        c.started,
        c.finished,
        c.score,
        c.max_score,
        report,
    )


def _submission(row: Any) -> Submission:
    return Submission(
        row.public_id,
        row.person,
        row.task,
        row.filename,
        row.sha256,
        row.uploaded,
        bool(row.late),
        row.status,
        row.started,
        row.finished,
        row.score,
        row.max_score,
        json.loads(row.report) if row.report else None,
    )


def _sqlite_settings(connection: Any, _record: Any) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")  # readers never wait for the dispatcher's writes
    cursor.execute("PRAGMA synchronous=FULL")  # an accepted upload survives a power cut
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()
