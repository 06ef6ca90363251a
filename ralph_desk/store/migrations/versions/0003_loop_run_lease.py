"""Loop run lease: the host and process of a loop run and its last heartbeat, so that start-up
recovery can tell a dead run from one still working on another machine.

Revision ID: 0003
Revises: 0002
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add heartbeat_at, host and pid to loop_runs."""
    with op.batch_alter_table("loop_runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("heartbeat_at", sa.DateTime(), nullable=True))
        batch_op.add_column(sa.Column("host", sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column("pid", sa.Integer(), nullable=True))


def downgrade() -> None:
    """Drop the lease columns of loop_runs."""
    with op.batch_alter_table("loop_runs", schema=None) as batch_op:
        batch_op.drop_column("pid")
        batch_op.drop_column("host")
        batch_op.drop_column("heartbeat_at")
