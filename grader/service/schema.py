"""The service's tables (SQLAlchemy Core): the same on SQLite and PostgreSQL. Alembic's
migrations (migrations/) create and change them; this module is what the code reads."""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
)

metadata = MetaData()

# A roster student or a member of staff, by the id the grade files use (submission_id).
people = Table(
    "people",
    metadata,
    Column("id", String(200), primary_key=True),
    Column("name", String(500), nullable=False, default=""),
    Column("staff", Boolean, nullable=False, default=False),
)

# Sign-in tokens, by their SHA-256 (the token itself is never stored).
tokens = Table(
    "tokens",
    metadata,
    Column("digest", String(64), primary_key=True),
    Column("person", String(200), ForeignKey("people.id"), nullable=False),
    Column("created", Float, nullable=False),
)

# A browser's signed-in session, by the SHA-256 of its cookie (its CSRF secret is made from the cookie).
sessions = Table(
    "sessions",
    metadata,
    Column("digest", String(64), primary_key=True),
    Column("person", String(200), ForeignKey("people.id"), nullable=False),
    Column("csrf", String(64), nullable=False),  # its CSRF secret's SHA-256 (tokens.csrf_of)
    Column("expires", Float, nullable=False),
    # the digest of the token it was opened with: a token deleted (revoked) ends its sessions
    Column("token", String(64), nullable=True),
)

# Every accepted upload, its bytes, and its grading: the queue is this table.
submissions = Table(
    "submissions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("public_id", String(64), nullable=False, unique=True),  # in URLs: unguessable
    Column("person", String(200), ForeignKey("people.id"), nullable=False),
    Column("task", String(200), nullable=False),
    Column("filename", String(300), nullable=False),
    Column("sha256", String(64), nullable=False),  # its bytes: contents, by this
    Column("uploaded", Float, nullable=False),
    Column("late", Boolean, nullable=False, default=False),
    Column("status", String(16), nullable=False),  # queued | grading | done
    Column("claimed_by", String(64), nullable=True),  # the server that grades it
    Column("started", Float, nullable=True),
    Column("finished", Float, nullable=True),
    Column("report", Text, nullable=True),  # the staff report, JSON (result.py)
    Column("score", Float, nullable=True),
    Column("max_score", Float, nullable=True),
)
Index("submissions_status", submissions.c.status, submissions.c.uploaded)
Index("submissions_person_uploaded", submissions.c.person, submissions.c.uploaded)  # (the upload rate)

# An upload's bytes, once per SHA-256 however often they are uploaded.
contents = Table(
    "contents",
    metadata,
    Column("sha256", String(64), primary_key=True),
    Column("content", LargeBinary, nullable=False),
    Column("size", Integer, nullable=False),
)
Index("submissions_person_task", submissions.c.person, submissions.c.task)

QUEUED, GRADING, DONE = "queued", "grading", "done"
