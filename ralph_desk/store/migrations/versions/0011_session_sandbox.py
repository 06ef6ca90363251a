"""A session records whether it ran confined, by which sandbox, and why not when it did not (DESIGN §15).

Revision ID: 0011
Revises: 0010
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add agent_sessions.sandbox (the tool, null: unconfined) and sandbox_note (what it allowed, or why not)."""
    with op.batch_alter_table("agent_sessions", recreate="auto") as batch_op:
        batch_op.add_column(sa.Column("sandbox", sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column("sandbox_note", sa.Text(), nullable=True))


def downgrade() -> None:
    """Drop the sessions' sandbox columns."""
    with op.batch_alter_table("agent_sessions", recreate="auto") as batch_op:
        batch_op.drop_column("sandbox_note")
        batch_op.drop_column("sandbox")
