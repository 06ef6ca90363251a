"""A line comment keeps the side of the diff it is on: a removed line of the old file, or a line of the new.

Revision ID: 0007
Revises: 0006
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add review_comments.side; the comments kept so far were all on the new side."""
    with op.batch_alter_table("review_comments", recreate="auto") as batch_op:
        batch_op.add_column(sa.Column("side", sa.String(length=3), server_default="new", nullable=False))
        batch_op.create_check_constraint(op.f("ck_review_comments_side_enum"), "side IN ('old', 'new')")


def downgrade() -> None:
    """Drop the side (a comment on a removed line then reads as one on the new file's line)."""
    with op.batch_alter_table("review_comments", recreate="auto") as batch_op:
        batch_op.drop_constraint(op.f("ck_review_comments_side_enum"), type_="check")
        batch_op.drop_column("side")
