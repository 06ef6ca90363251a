"""An approval keeps the commit the person approved: exactly that commit merges at its turn.

Revision ID: 0009
Revises: 0008
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add merge_queue.approved_commit (approvals queued before have none: they are asked again)."""
    with op.batch_alter_table("merge_queue", recreate="auto") as batch_op:
        batch_op.add_column(sa.Column("approved_commit", sa.String(length=64), nullable=True))


def downgrade() -> None:
    """Drop the approved commit (a queued approval then merges the branch's tip at its turn)."""
    with op.batch_alter_table("merge_queue", recreate="auto") as batch_op:
        batch_op.drop_column("approved_commit")
