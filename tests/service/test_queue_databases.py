"""The service's store on both databases it supports, in process: the Alembic migration
builds exactly the tables schema.py declares, and every query (people, tokens, sessions,
uploads, the queue's fair claim, finish, requeue) answers the same on SQLite and on a real
PostgreSQL (tests/service/postgres.py)."""

from __future__ import annotations

import time

import pytest

from grader.service.store import Store
from service.postgres import postgres_cluster, postgres_url  # noqa: F401 (fixtures)


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path):
    url = (
        f"sqlite:///{tmp_path}/service.sqlite"
        if request.param == "sqlite"
        else request.getfixturevalue("postgres_url")
    )
    store = Store(url)
    store.upgrade()
    yield store
    store.close()


def test_the_migration_builds_what_schema_declares_and_runs_twice(store):
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext
    from sqlalchemy import inspect

    from grader.service.schema import metadata

    store.upgrade()  # (every start runs it: a second time changes nothing)
    with store.engine.connect() as connection:
        context = MigrationContext.configure(connection)
        assert context.get_current_revision() == "0003"
        assert compare_metadata(context, metadata) == []
        indexes = {i["name"] for i in inspect(connection).get_indexes("submissions")}
    assert {"submissions_status", "submissions_person_task", "submissions_person_uploaded"} <= indexes


def test_people_tokens_and_sessions(store):
    store.enrol("ana", "Ana Ñúñez")
    store.enrol("ben", "Ben")
    store.enrol("ana", "Ana Ñúñez", staff=True)
    assert [(p.id, p.name, p.staff) for p in store.everyone()] == [
        ("ana", "Ana Ñúñez", True),
        ("ben", "Ben", False),
    ]
    secret = store.issue_token("ben")
    assert store.person_by_token(secret).id == "ben"
    assert store.person_by_token(secret + "x") is None
    assert store.person_by_token("") is None
    cookie, csrf = store.open_session("ana", store.issue_token("ana"))
    session = store.session(cookie)
    assert session is not None and session.person.id == "ana" and session.csrf == csrf
    store.close_session(cookie)
    assert store.session(cookie) is None
    cookie, _ = store.open_session("ben", secret)  # (a session lasts as long as its token)
    assert store.session(cookie).person.id == "ben"
    from grader.service.schema import tokens as token_table

    with store.engine.begin() as db:
        db.execute(token_table.delete())
    assert store.session(cookie) is None


def test_uploads_keep_their_bytes_and_are_listed(store):
    store.enrol("ana")
    content = bytes(range(256)) * 3  # every byte value, NUL included
    first = store.accept("ana", "t1", "pe.py", content, late=False)
    second = store.accept("ana", "t1", "pe2.py", b"x = 1\n", late=True)
    store.accept("ana", "t2", "other.py", b"y = 2\n", late=False)
    assert store.attempts("ana", "t1") == 2
    found = store.submission(first)
    assert (found.status, found.filename, found.late, found.report) == ("queued", "pe.py", False, None)
    assert store.submission(second).late is True
    assert [s.filename for s in store.submissions_of("ana")] == ["other.py", "pe2.py", "pe.py"]
    assert {k: s.filename for k, s in store.latest().items()} == {
        ("ana", "t1"): "pe2.py",
        ("ana", "t2"): "other.py",
    }
    assert (store.position(first), store.position(second)) == (0, 1)
    claimed = store.claim_next("server")
    assert claimed.content == content and claimed.public_id == first
    assert store.position(first) is None
    assert store.counts() == {"queued": 2, "grading": 1}


def test_the_claim_is_fair_and_a_result_is_recorded_once(store):
    for person in ("flood", "honest", "late"):
        store.enrol(person)
    flood = [store.accept("flood", "t", f"f{k}.py", b"f", False) for k in range(5)]
    honest = store.accept("honest", "t", "h.py", b"h", False)
    first = store.claim_next("s1")
    assert first.public_id == flood[0]
    second = store.claim_next("s1")  # the flood has one grading: the honest upload next
    assert second.public_id == honest
    assert store.claim_next("s1") is None  # no one has two graded at once
    time.sleep(0.01)
    later = store.accept("late", "t", "l.py", b"l", False)
    assert store.finish(first.id, "s1", {"score": 1.0, "max_score": 2.0})
    assert not store.finish(first.id, "s1", {"score": 2.0, "max_score": 2.0})  # once
    assert not store.finish(second.id, "another server", {"score": 2.0, "max_score": 2.0})
    # never served goes before served long ago: the late student, then the flood again
    assert store.claim_next("s1").public_id == later
    assert store.finish(second.id, "s1", {"score": 2.0, "max_score": 2.0})
    assert store.claim_next("s1").public_id == flood[1]
    assert store.submission(first.public_id).score == 1.0
    assert store.submission(first.public_id).report == {"score": 1.0, "max_score": 2.0}


def test_requeue_abandoned_and_regrade(store):
    store.enrol("ana")
    store.enrol("ben")
    a = store.accept("ana", "t", "a.py", b"a", False)
    b = store.accept("ben", "t", "b.py", b"b", False)
    ca, cb = store.claim_next("dead"), store.claim_next("dead")
    store.requeue(ca.id, "someone else")  # only its own claims
    assert store.submission(a).status == "grading"
    store.requeue(ca.id, "dead")
    assert store.submission(a).status == "queued"
    assert store.requeue_abandoned() == 1  # b, whose server died
    assert store.submission(b).status == "queued"
    assert not store.finish(cb.id, "dead", {"score": 1.0})  # a result after the requeue is dropped
    again = store.claim_next("alive")
    assert store.finish(again.id, "alive", {"score": 1.0, "max_score": 1.0})
    assert store.regrade(person_id=again.person) == 1
    assert store.submission(again.public_id).status == "queued"
    assert store.regrade(person_id=again.person) == 0  # (queued already)


def test_a_claim_only_takes_the_tasks_a_server_grades(store):
    store.enrol("ana")
    store.enrol("ben")
    store.accept("ana", "old", "a.py", b"a", False)
    b = store.accept("ben", "new", "b.py", b"b", False)
    assert store.claim_next("s", ["new"]).public_id == b
    assert store.claim_next("s", ["new"]) is None
    assert store.counts() == {"queued": 1, "grading": 1}


def test_the_position_told_follows_the_fair_turns(store):
    """What a waiting student is told (the API's "ahead", the waiting page): a flood of
    another's uploads is not ahead of an honest one; two students' uploads alternate."""
    for person in ("flood", "honest", "a", "b"):
        store.enrol(person)
    flood = [store.accept("flood", "t", f"f{k}.py", b"f", False) for k in range(6)]
    grading = store.claim_next("s")  # the flood's first
    honest = store.accept("honest", "t", "h.py", b"h", False)
    assert store.position(honest) == 0
    assert [store.position(f) for f in flood[1:]] == [1, 2, 3, 4, 5]
    a = [store.accept("a", "t", f"a{k}.py", b"a", False) for k in range(2)]
    b = [store.accept("b", "t", f"b{k}.py", b"b", False) for k in range(2)]
    # turns: honest, a, b (never served, oldest first), then the flood (served)
    assert store.position(honest) == 0
    assert [store.position(x) for x in (a[0], b[0], a[1], b[1])] == [1, 2, 4, 5]
    assert store.position(flood[1]) == 3
    store.finish(grading.id, "s", {"score": 0.0, "max_score": 1.0})
    order = []
    while (claimed := store.claim_next("s")) is not None:
        order.append(claimed.public_id)
        store.finish(claimed.id, "s", {"score": 0.0, "max_score": 1.0})
        time.sleep(0.002)  # (each grading begins at its own time)
    assert order[:6] == [honest, a[0], b[0], flood[1], a[1], b[1]]


# --------------------------------------------------------------------------- budgets (issue 34)


def test_a_person_s_upload_rate_is_bounded_with_when_to_try_again(store):
    """One token stored 40 uploads in 2.6 s: now the 11th upload within a minute is refused,
    saying in how many seconds one is taken again; another person is not slowed."""
    from grader.service.limits import ClientLimits
    from grader.service.store import OverBudget

    store.enrol("flood")
    store.enrol("honest")
    limits = ClientLimits()
    for k in range(limits.uploads_per_minute):
        store.accept("flood", "t", f"f{k}.py", b"f%d" % k, False, limits)
    with pytest.raises(OverBudget) as refused:
        store.accept("flood", "t2", "more.py", b"more", False, limits)  # (all tasks count)
    assert 1 <= refused.value.retry_after <= 61
    assert "try again in" in str(refused.value)
    assert store.attempts("flood", "t2") == 0
    store.accept("honest", "t", "h.py", b"h", False, limits)


def test_identical_bytes_are_stored_once_and_a_person_s_bytes_per_task_are_bounded(store):
    from sqlalchemy import func, select

    from grader.service.limits import ClientLimits
    from grader.service.schema import contents
    from grader.service.store import OverBudget

    store.enrol("ana")
    store.enrol("ben")
    limits = ClientLimits(uploads_per_minute=1000, upload_mib_per_task=2)
    mib = b"#" * (1 << 20)
    for k in range(20):  # the same MiB again and again: stored once, never over the budget
        store.accept("ana", "t", f"same{k}.py", mib, False, limits)
    store.accept("ben", "t", "same.py", mib, False, limits)  # (and once for everyone)
    with store.engine.begin() as db:
        assert db.execute(select(func.count()).select_from(contents)).scalar_one() == 1
    store.accept("ana", "t", "other.py", b"$" * (1 << 20), False, limits)
    with pytest.raises(OverBudget) as refused:
        store.accept("ana", "t", "third.py", b"%" * 100, False, limits)
    assert "2 MiB" in str(refused.value) and refused.value.retry_after is None
    store.accept("ana", "t2", "third.py", b"%" * 100, False, limits)  # (another task's budget)
    claimed = [store.claim_next("s") for _ in range(2)]
    assert {c.content for c in claimed if c} <= {mib, b"$" * (1 << 20), b"%" * 100}


def test_uploads_per_task_and_sessions_per_person_are_bounded(store):
    from sqlalchemy import func, select

    from grader.service.limits import ClientLimits
    from grader.service.schema import sessions
    from grader.service.store import OverBudget

    store.enrol("ana")
    limits = ClientLimits(uploads_per_minute=1000, uploads_per_task=3)
    for _ in range(3):
        store.accept("ana", "t", "a.py", b"a", False, limits)
    with pytest.raises(OverBudget):
        store.accept("ana", "t", "a.py", b"a", False, limits)
    token = store.issue_token("ana")
    opened = [store.open_session("ana", token, keep=5)[0] for _ in range(12)]
    with store.engine.begin() as db:
        assert db.execute(select(func.count()).select_from(sessions)).scalar_one() == 5
    assert all(store.session(c) is not None for c in opened[-5:])  # the newest five
    assert store.session(opened[0]) is None  # the oldest browser signed out


def test_the_migration_moves_stored_bytes_into_contents(tmp_path):
    """A database of 0002 (bytes in each submission's row) keeps every upload's bytes."""
    import hashlib
    import os
    import sqlite3

    from alembic import command
    from alembic.config import Config

    import grader.service.store

    url = f"sqlite:///{tmp_path}/old.sqlite"
    store = Store(url)
    config = Config()
    config.set_main_option(
        "script_location", os.path.join(os.path.dirname(grader.service.store.__file__), "migrations")
    )
    with store.engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0002")
    with sqlite3.connect(tmp_path / "old.sqlite") as db:
        db.execute("INSERT INTO people (id, name, staff) VALUES ('ana', '', 0)")
        for k, body in enumerate((b"one\x00", b"two", b"one\x00")):
            db.execute(
                "INSERT INTO submissions (public_id, person, task, filename, content, sha256, uploaded, late, status)"
                " VALUES (?, 'ana', 't', 'a.py', ?, ?, ?, 0, 'queued')",
                (f"p{k}", body, hashlib.sha256(body).hexdigest(), float(k)),
            )
    store.upgrade()
    got = [store.claim_next(f"s{k}") for k in range(3)]
    store.close()
    assert [c.content for c in got if c] == [b"one\x00"]  # (one person grades one at a time)
    with sqlite3.connect(tmp_path / "old.sqlite") as db:
        assert sorted(r[0] for r in db.execute("SELECT content FROM contents")) == [b"one\x00", b"two"]
