"""Every run of a project check is recorded: the evidence that a task's done was earned (DESIGN §13).

Revision ID: 0010
Revises: 0009
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

STATUSES = "'running', 'passed', 'failed', 'timed_out', 'error', 'stopped'"
PURPOSES = "'session', 'rerun', 'merge', 'project'"


def upgrade() -> None:
    """Add check_runs, and merge_queue.checks_overridden (the failing checks a person merged anyway)."""
    op.create_table(
        "check_runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("task_id", sa.Integer(), nullable=True),
        sa.Column("session_id", sa.String(length=128), nullable=True),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("command", sa.Text(), nullable=False),
        sa.Column("required", sa.Boolean(), nullable=False),
        sa.Column("purpose", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("exit_code", sa.Integer(), nullable=True),
        sa.Column("duration_s", sa.Float(), nullable=True),
        sa.Column("tail", sa.Text(), nullable=False),
        sa.Column("log_path", sa.Text(), nullable=True),
        sa.Column("commit", sa.String(length=64), nullable=True),
        sa.Column("started_at", sa.DateTime(), nullable=False),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.CheckConstraint(f"status IN ({STATUSES})", name=op.f("ck_check_runs_status_enum")),
        sa.CheckConstraint(f"purpose IN ({PURPOSES})", name=op.f("ck_check_runs_purpose_enum")),
        sa.ForeignKeyConstraint(
            ["task_id"], ["tasks.id"], name=op.f("fk_check_runs_task_id_tasks"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_check_runs")),
    )
    with op.batch_alter_table("check_runs", schema=None) as batch_op:
        batch_op.create_index("ix_check_runs_task", ["task_id", "id"], unique=False)
        batch_op.create_index("ix_check_runs_session", ["session_id"], unique=False)
    with op.batch_alter_table("merge_queue", recreate="auto") as batch_op:
        batch_op.add_column(sa.Column("checks_overridden", sa.Text(), nullable=True))


def downgrade() -> None:
    """Drop the records of check runs (their log files stay in .ralph/logs/checks/)."""
    with op.batch_alter_table("merge_queue", recreate="auto") as batch_op:
        batch_op.drop_column("checks_overridden")
    op.drop_table("check_runs")
