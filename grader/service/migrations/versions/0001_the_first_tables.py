"""The first tables: people, tokens, sessions, submissions (the queue).

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "people",
        sa.Column("id", sa.String(200), primary_key=True),
        sa.Column("name", sa.String(500), nullable=False),
        sa.Column("staff", sa.Boolean, nullable=False),
    )
    op.create_table(
        "tokens",
        sa.Column("digest", sa.String(64), primary_key=True),
        sa.Column("person", sa.String(200), sa.ForeignKey("people.id"), nullable=False),
        sa.Column("created", sa.Float, nullable=False),
    )
    op.create_table(
        "sessions",
        sa.Column("digest", sa.String(64), primary_key=True),
        sa.Column("person", sa.String(200), sa.ForeignKey("people.id"), nullable=False),
        sa.Column("csrf", sa.String(64), nullable=False),
        sa.Column("expires", sa.Float, nullable=False),
    )
    op.create_table(
        "submissions",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("public_id", sa.String(64), nullable=False, unique=True),
        sa.Column("person", sa.String(200), sa.ForeignKey("people.id"), nullable=False),
        sa.Column("task", sa.String(200), nullable=False),
        sa.Column("filename", sa.String(300), nullable=False),
        sa.Column("content", sa.LargeBinary, nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("uploaded", sa.Float, nullable=False),
        sa.Column("late", sa.Boolean, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("claimed_by", sa.String(64), nullable=True),
        sa.Column("started", sa.Float, nullable=True),
        sa.Column("finished", sa.Float, nullable=True),
        sa.Column("report", sa.Text, nullable=True),
        sa.Column("score", sa.Float, nullable=True),
        sa.Column("max_score", sa.Float, nullable=True),
    )
    op.create_index("submissions_status", "submissions", ["status", "uploaded"])
    op.create_index("submissions_person_task", "submissions", ["person", "task"])


def downgrade() -> None:
    op.drop_table("submissions")
    op.drop_table("sessions")
    op.drop_table("tokens")
    op.drop_table("people")
