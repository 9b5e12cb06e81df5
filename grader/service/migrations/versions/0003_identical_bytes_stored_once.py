"""Uploads' bytes are stored once by their SHA-256 (the ``contents`` table): the same file
uploaded again costs its row, not its bytes again. Existing bytes move there.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "contents",
        sa.Column("sha256", sa.String(64), primary_key=True),
        sa.Column("content", sa.LargeBinary, nullable=False),
        sa.Column("size", sa.Integer, nullable=False),
    )
    op.execute(
        "INSERT INTO contents (sha256, content, size) "
        "SELECT sha256, content, LENGTH(content) FROM submissions "
        "WHERE id IN (SELECT MIN(id) FROM submissions GROUP BY sha256)"
    )
    with op.batch_alter_table("submissions") as batch:  # (SQLite alters a table by copying it)
        batch.drop_column("content")
    op.create_index("submissions_person_uploaded", "submissions", ["person", "uploaded"])


def downgrade() -> None:
    op.drop_index("submissions_person_uploaded", "submissions")
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("content", sa.LargeBinary, nullable=True))
    op.execute(
        "UPDATE submissions SET content = (SELECT content FROM contents WHERE contents.sha256 = submissions.sha256)"
    )
    op.drop_table("contents")
