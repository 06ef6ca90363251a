"""Task branches are recorded by their full ref and their task's identity, never found by an id prefix.

Revision ID: 0008
Revises: 0007
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add task_branches (which ref is whose) and branch_adoptions (checkouts whose old branches were taken in).

    The branches made before this revision are adopted by the desk, once per checkout, on first use.
    """
    op.create_table(
        "task_branches",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("task_id", sa.Integer(), nullable=False),
        sa.Column("task_created_at", sa.DateTime(), nullable=False),
        sa.Column("checkout", sa.String(length=1200), nullable=False),
        sa.Column("ref", sa.String(length=600), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_task_branches")),
        sa.UniqueConstraint("checkout", "ref", name=op.f("uq_task_branches_checkout")),
    )
    with op.batch_alter_table("task_branches", schema=None) as batch_op:
        batch_op.create_index("ix_task_branches_task", ["task_id"], unique=False)
    op.create_table(
        "branch_adoptions",
        sa.Column("checkout", sa.String(length=1200), nullable=False),
        sa.Column("adopted_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("checkout", name=op.f("pk_branch_adoptions")),
    )


def downgrade() -> None:
    """Drop the records (an older ralph-desk finds task branches by their names again)."""
    op.drop_table("branch_adoptions")
    op.drop_table("task_branches")
