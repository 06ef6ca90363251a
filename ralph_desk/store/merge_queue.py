"""Merge queue queries: approved tasks waiting, in approval order, for their checkout to merge them."""

from __future__ import annotations

from sqlalchemy import delete, select, update

from ralph_desk.domain.enums import ChangeTopic
from ralph_desk.domain.reviews import QueuedMerge
from ralph_desk.store import mapping
from ralph_desk.store.database import UnitOfWork
from ralph_desk.store.schema import MergeQueueRow

TOPIC = ChangeTopic.MERGES


def enqueue(
    unit: UnitOfWork,
    task_id: int,
    checkout: str,
    commit: str | None,
    checks_overridden: str | None = None,
    approved_by: str | None = None,
) -> QueuedMerge:
    """Queue the approval of `commit` (None: a task without a branch) at the end; a task approved again
    after a refusal goes to the end too. `checks_overridden`: the failing checks the person merges anyway;
    `approved_by`: the paired device that approved (None: the desk)."""
    unit.execute(delete(MergeQueueRow).where(MergeQueueRow.task_id == task_id))
    row = MergeQueueRow(
        task_id=task_id,
        checkout=checkout,
        approved_commit=commit,
        checks_overridden=checks_overridden,
        approved_by=approved_by,
    )
    unit.session.add(row)
    unit.session.flush()
    unit.touch(TOPIC, task_id)
    return mapping.queued_merge(row)


def waiting(unit: UnitOfWork, checkout: str) -> list[QueuedMerge]:
    """The entries a checkout has still to merge (not refused), in approval order."""
    statement = select(MergeQueueRow).where(
        MergeQueueRow.checkout == checkout, MergeQueueRow.refused.is_(None)
    )
    return [mapping.queued_merge(row) for row in unit.session.scalars(statement.order_by(MergeQueueRow.id))]


def entry(unit: UnitOfWork, task_id: int) -> QueuedMerge | None:
    """A task's queue entry, if it has one."""
    row = unit.session.scalars(select(MergeQueueRow).where(MergeQueueRow.task_id == task_id)).first()
    return mapping.queued_merge(row) if row is not None else None


def ahead_of(unit: UnitOfWork, queued: QueuedMerge) -> int:
    """How many entries of the same checkout wait before this one."""
    statement = select(MergeQueueRow.id).where(
        MergeQueueRow.checkout == queued.checkout,
        MergeQueueRow.refused.is_(None),
        MergeQueueRow.id < queued.id,
    )
    return len(unit.session.scalars(statement).all())


def refuse(unit: UnitOfWork, task_id: int, reason: str) -> None:
    """Keep a task's entry with the reason its merge was refused; the queue goes on without it."""
    unit.execute(update(MergeQueueRow).where(MergeQueueRow.task_id == task_id).values(refused=reason))
    unit.touch(TOPIC, task_id)


def remove(unit: UnitOfWork, task_id: int) -> bool:
    """Take a task off the queue (merged, sent back, discarded); whether it was on it."""
    result = unit.execute(delete(MergeQueueRow).where(MergeQueueRow.task_id == task_id))
    if result.rowcount:
        unit.touch(TOPIC, task_id)
    return bool(result.rowcount)
