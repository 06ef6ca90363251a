"""The companion page's paired devices and one-time pairing codes; decisions record their maker (DESIGN §14).

Revision ID: 0012
Revises: 0011
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add companion_devices, companion_codes, task_signals.decided_by and merge_queue.approved_by."""
    op.create_table(
        "companion_devices",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("token_hash", sa.String(length=128), nullable=False),
        sa.Column("paired_at", sa.DateTime(), nullable=False),
        sa.Column("last_used_at", sa.DateTime(), nullable=True),
        sa.Column("revoked_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_companion_devices")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_companion_devices_token_hash")),
    )
    op.create_table(
        "companion_codes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("code_hash", sa.String(length=128), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.Column("used_at", sa.DateTime(), nullable=True),
        sa.Column("device_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["device_id"],
            ["companion_devices.id"],
            name=op.f("fk_companion_codes_device_id_companion_devices"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_companion_codes")),
        sa.UniqueConstraint("code_hash", name=op.f("uq_companion_codes_code_hash")),
    )
    with op.batch_alter_table("task_signals", recreate="auto") as batch_op:
        batch_op.add_column(sa.Column("decided_by", sa.String(length=200), nullable=True))
    with op.batch_alter_table("merge_queue", recreate="auto") as batch_op:
        batch_op.add_column(sa.Column("approved_by", sa.String(length=200), nullable=True))


def downgrade() -> None:
    """Drop the companion's tables and the decisions' makers."""
    with op.batch_alter_table("merge_queue", recreate="auto") as batch_op:
        batch_op.drop_column("approved_by")
    with op.batch_alter_table("task_signals", recreate="auto") as batch_op:
        batch_op.drop_column("decided_by")
    op.drop_table("companion_codes")
    op.drop_table("companion_devices")
