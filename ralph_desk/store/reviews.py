"""Review comment queries: a reviewer's comments on a task's diff, and their way to the agent."""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy import delete, select, update

from ralph_desk.domain.enums import ChangeTopic, DiffSide, ReviewCommentState
from ralph_desk.domain.reviews import ReviewComment
from ralph_desk.store import mapping
from ralph_desk.store.database import UnitOfWork
from ralph_desk.store.schema import ReviewCommentRow

TOPIC = ChangeTopic.REVIEWS


def list_for(
    unit: UnitOfWork, task_id: int, states: tuple[ReviewCommentState, ...] = ()
) -> list[ReviewComment]:
    """A task's review comments (of some states, or all), oldest first."""
    statement = select(ReviewCommentRow).where(ReviewCommentRow.task_id == task_id)
    if states:
        statement = statement.where(ReviewCommentRow.state.in_([state.value for state in states]))
    rows = unit.session.scalars(statement.order_by(ReviewCommentRow.id))
    return [mapping.review_comment(row) for row in rows]


def add(
    unit: UnitOfWork,
    task_id: int,
    author: str,
    body: str,
    file: str | None,
    line: int | None,
    session_id: str | None = None,
    side: DiffSide = DiffSide.NEW,
) -> ReviewComment:
    """Add an open comment to a task."""
    row = ReviewCommentRow(
        task_id=task_id,
        author=author,
        body=body,
        file=file,
        line=line,
        side=side.value,
        session_id=session_id,
        state=ReviewCommentState.OPEN.value,
    )
    unit.session.add(row)
    unit.session.flush()
    unit.touch(TOPIC, task_id)
    return mapping.review_comment(row)


def get(unit: UnitOfWork, comment_id: int) -> ReviewComment | None:
    """One comment, or None."""
    row = unit.session.get(ReviewCommentRow, comment_id)
    return mapping.review_comment(row) if row is not None else None


def edit(unit: UnitOfWork, comment: ReviewComment, body: str) -> ReviewComment:
    """Give a comment new text."""
    unit.execute(update(ReviewCommentRow).where(ReviewCommentRow.id == comment.id).values(body=body))
    unit.touch(TOPIC, comment.task_id)
    return replace(comment, body=body)


def remove(unit: UnitOfWork, comment: ReviewComment) -> None:
    """Delete a comment."""
    unit.execute(delete(ReviewCommentRow).where(ReviewCommentRow.id == comment.id))
    unit.touch(TOPIC, comment.task_id)


def move(
    unit: UnitOfWork,
    task_id: int,
    from_state: ReviewCommentState,
    to_state: ReviewCommentState,
    session_id: str | None = None,
) -> int:
    """Move a task's comments from one state to another; how many moved."""
    values: dict[str, str | None] = {"state": to_state.value}
    if to_state is ReviewCommentState.ADDRESSED:
        values["addressed_session_id"] = session_id
    result = unit.execute(
        update(ReviewCommentRow)
        .where(ReviewCommentRow.task_id == task_id, ReviewCommentRow.state == from_state.value)
        .values(**values)
    )
    if result.rowcount:
        unit.touch(TOPIC, task_id)
    return int(result.rowcount or 0)
