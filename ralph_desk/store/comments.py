"""Task comment queries."""

from __future__ import annotations

from sqlalchemy import select

from ralph_desk.domain.enums import ChangeTopic
from ralph_desk.domain.records import Comment
from ralph_desk.store import mapping
from ralph_desk.store.database import UnitOfWork
from ralph_desk.store.schema import TaskCommentRow
from ralph_desk.store.writes import CommentWrite, assign, checked


def get(unit: UnitOfWork, comment_id: int) -> Comment | None:
    """One comment, by id (whatever its task)."""
    row = unit.session.get(TaskCommentRow, comment_id)
    return mapping.comment(mapping.columns(row)) if row else None


def list_for(unit: UnitOfWork, task_id: int) -> list[Comment]:
    """A task's comments, oldest first."""
    rows = unit.session.scalars(
        select(TaskCommentRow).where(TaskCommentRow.task_id == task_id).order_by(TaskCommentRow.id)
    )
    return [mapping.comment(mapping.columns(row)) for row in rows]


def add(unit: UnitOfWork, task_id: int, fields: CommentWrite) -> Comment:
    """Add a comment to a task."""
    row = TaskCommentRow(task_id=task_id, **checked(fields, CommentWrite))
    unit.session.add(row)
    unit.session.flush()
    unit.touch(ChangeTopic.COMMENTS, row.id)
    unit.touch(ChangeTopic.TASKS, task_id)
    return mapping.comment(mapping.columns(row))


def update(unit: UnitOfWork, comment_id: int, fields: CommentWrite) -> Comment | None:
    """Change a comment's fields."""
    row = unit.session.get(TaskCommentRow, comment_id)
    if row is None:
        return None
    assign(row, fields, CommentWrite)
    unit.session.flush()
    unit.touch(ChangeTopic.COMMENTS, row.id)
    unit.touch(ChangeTopic.TASKS, row.task_id)
    return mapping.comment(mapping.columns(row))


def delete(unit: UnitOfWork, comment_id: int) -> bool:
    """Remove a comment."""
    row = unit.session.get(TaskCommentRow, comment_id)
    if row is None:
        return False
    task_id = row.task_id
    unit.session.delete(row)
    unit.session.flush()
    unit.touch(ChangeTopic.COMMENTS, comment_id)
    unit.touch(ChangeTopic.TASKS, task_id)
    return True
