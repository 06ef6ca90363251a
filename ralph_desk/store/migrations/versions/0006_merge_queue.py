"""The merge queue: approved tasks wait in the database, in approval order, for their turn to merge.

Revision ID: 0006
Revises: 0005
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add the merge_queue table."""
    op.create_table(
        "merge_queue",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("task_id", sa.Integer(), nullable=False),
        sa.Column("checkout", sa.String(length=1200), nullable=False),
        sa.Column("approved_at", sa.DateTime(), nullable=False),
        sa.Column("refused", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["task_id"], ["tasks.id"], name=op.f("fk_merge_queue_task_id_tasks"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_merge_queue")),
        sa.UniqueConstraint("task_id", name=op.f("uq_merge_queue_task_id")),
    )
    with op.batch_alter_table("merge_queue", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_merge_queue_checkout"), ["checkout"], unique=False)


def downgrade() -> None:
    """Drop the merge queue (its tasks stay in review)."""
    op.drop_table("merge_queue")
