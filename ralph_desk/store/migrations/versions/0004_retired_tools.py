"""Retired tools: the deletes and comment edits of seed 000 and add_task_context_file are no tools any
more (no recipe allowed them), so their names leave the disciplines' disabled tools.

Revision ID: 0004
Revises: 0003
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

RETIRED = frozenset(
    {
        "delete_task",
        "add_task_context_file",
        "update_task_comment",
        "delete_task_comment",
        "delete_feature",
        "delete_discipline",
    }
)
disciplines = sa.table("disciplines", sa.column("id", sa.Integer()), sa.column("disabled_tools", sa.JSON()))


def upgrade() -> None:
    """Drop the retired tools' names from every discipline's disabled tools."""
    connection = op.get_bind()
    for row in connection.execute(sa.select(disciplines.c.id, disciplines.c.disabled_tools)).all():
        kept = [name for name in row.disabled_tools or [] if name not in RETIRED]
        if kept != list(row.disabled_tools or []):
            connection.execute(
                disciplines.update().where(disciplines.c.id == row.id).values(disabled_tools=kept)
            )


def downgrade() -> None:
    """Nothing to restore: disabling a tool that does not exist changed nothing."""
