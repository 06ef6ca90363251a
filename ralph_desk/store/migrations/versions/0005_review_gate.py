"""The review gate: tasks may be `in_review`, and reviewers' comments on a task's diff have a table.

Revision ID: 0005
Revises: 0004
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_STATUSES = "'draft', 'pending', 'in_progress', 'done', 'blocked', 'needs_input', 'skipped', 'failed'"
NEW_STATUSES = (
    "'draft', 'pending', 'in_progress', 'in_review', 'done', 'blocked', 'needs_input', 'skipped', 'failed'"
)


def _status_check(statuses: str) -> None:
    # SQLite rebuilds the table (batch mode); the migration runs with foreign keys off, so nothing cascades.
    with op.batch_alter_table("tasks", recreate="auto") as batch_op:
        batch_op.drop_constraint(op.f("ck_tasks_status_enum"), type_="check")
        batch_op.create_check_constraint(op.f("ck_tasks_status_enum"), f"status IN ({statuses})")


def upgrade() -> None:
    """Allow `in_review` and add the review_comments table."""
    _status_check(NEW_STATUSES)
    op.create_table(
        "review_comments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("task_id", sa.Integer(), nullable=False),
        sa.Column("session_id", sa.String(length=128), nullable=True),
        sa.Column("author", sa.String(length=200), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("file", sa.Text(), nullable=True),
        sa.Column("line", sa.Integer(), nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("addressed_session_id", sa.String(length=128), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.CheckConstraint(
            "state IN ('open', 'requested', 'addressed')", name=op.f("ck_review_comments_state_enum")
        ),
        sa.CheckConstraint("line IS NULL OR line >= 1", name=op.f("ck_review_comments_line_positive")),
        sa.ForeignKeyConstraint(
            ["task_id"], ["tasks.id"], name=op.f("fk_review_comments_task_id_tasks"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_review_comments")),
    )
    with op.batch_alter_table("review_comments", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_review_comments_task_id"), ["task_id"], unique=False)


def downgrade() -> None:
    """Drop the review comments; tasks in review go back to done."""
    op.drop_table("review_comments")
    op.execute("UPDATE tasks SET status = 'done' WHERE status = 'in_review'")
    _status_check(OLD_STATUSES)
