"""A session names the sign-in token that opened it (its digest): deleting a token ends
its sessions. Sessions opened before (no token) end at once: their browsers sign in again.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("sessions") as batch:  # (SQLite alters a table by copying it)
        batch.add_column(sa.Column("token", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sessions") as batch:
        batch.drop_column("token")
