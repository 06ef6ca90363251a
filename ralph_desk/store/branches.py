"""Task branch records: which full ref belongs to which task in which checkout, and the one-time adoption."""

from __future__ import annotations

from sqlalchemy import and_, delete, select
from sqlalchemy.exc import IntegrityError

from ralph_desk.domain.branches import TaskBranch, UnrecordedTask
from ralph_desk.domain.enums import TaskStatus
from ralph_desk.store import mapping
from ralph_desk.store.database import UnitOfWork
from ralph_desk.store.errors import StoreError
from ralph_desk.store.schema import AgentSessionRow, BranchAdoptionRow, TaskBranchRow, TaskRow

_OWNER = and_(TaskRow.id == TaskBranchRow.task_id, TaskRow.created_at == TaskBranchRow.task_created_at)


def in_checkout(unit: UnitOfWork, checkout: str) -> list[TaskBranch]:
    """Every branch the desk recorded in this checkout, oldest first, each saying whether its task lives."""
    statement = (
        select(TaskBranchRow, TaskRow.id)
        .outerjoin(TaskRow, _OWNER)
        .where(TaskBranchRow.checkout == checkout)
        .order_by(TaskBranchRow.id)
    )
    return [mapping.task_branch(row, owner is not None) for row, owner in unit.session.execute(statement)]


def of_task(unit: UnitOfWork, checkout: str, task_id: int) -> TaskBranch | None:
    """The branch this very task (not an earlier one with its id) has in this checkout, if any."""
    statement = (
        select(TaskBranchRow)
        .join(TaskRow, _OWNER)
        .where(TaskBranchRow.checkout == checkout, TaskBranchRow.task_id == task_id)
        .order_by(TaskBranchRow.id.desc())
    )
    row = unit.session.scalars(statement).first()
    return mapping.task_branch(row, True) if row is not None else None


def record(unit: UnitOfWork, checkout: str, task_id: int, ref: str) -> TaskBranch:
    """Record `ref` here as the branch of task `task_id` (as it is now); StoreError when the task is gone."""
    created = unit.session.scalar(select(TaskRow.created_at).where(TaskRow.id == task_id))
    if created is None:
        raise StoreError(f"task #{task_id} is gone: its branch {ref} was not recorded")
    row = TaskBranchRow(task_id=task_id, task_created_at=created, checkout=checkout, ref=ref)
    unit.session.add(row)
    unit.session.flush()
    return mapping.task_branch(row, True)


def forget(unit: UnitOfWork, checkout: str, ref: str) -> None:
    """Drop the record of a ref that is gone from this checkout's repository."""
    unit.execute(delete(TaskBranchRow).where(TaskBranchRow.checkout == checkout, TaskBranchRow.ref == ref))


def adopted(unit: UnitOfWork, checkout: str) -> bool:
    """Whether this checkout's branches from before the records were adopted already."""
    return unit.session.get(BranchAdoptionRow, checkout) is not None


def mark_adopted(unit: UnitOfWork, checkout: str) -> bool:
    """Note the adoption for this checkout; False when another process noted it first (adopt nothing then)."""
    try:
        with unit.session.begin_nested():
            unit.session.add(BranchAdoptionRow(checkout=checkout))
    except IntegrityError:
        return False
    return True


def unrecorded(unit: UnitOfWork, checkout: str) -> list[UnrecordedTask]:
    """Tasks not merged that have no branch record here, each with the newest commit one of its sessions made.

    A task whose sessions made no commit has no work on a branch to adopt, and is left out.
    """
    recorded = select(TaskBranchRow.task_id).join(TaskRow, _OWNER).where(TaskBranchRow.checkout == checkout)
    tasks = unit.session.scalars(
        select(TaskRow.id)
        .where(TaskRow.status != TaskStatus.DONE.value, TaskRow.id.not_in(recorded))
        .order_by(TaskRow.id)
    ).all()
    found: list[UnrecordedTask] = []
    for task_id in tasks:
        newest = unit.session.execute(
            select(AgentSessionRow.head_after)
            .where(
                AgentSessionRow.task_id == task_id,
                AgentSessionRow.head_after.is_not(None),
                # A session that committed: its commit is the task's own work, never a base commit that
                # every branch made from the base (another project's too) holds.
                (AgentSessionRow.head_before.is_(None))
                | (AgentSessionRow.head_after != AgentSessionRow.head_before),
            )
            .order_by(AgentSessionRow.started_at.desc(), AgentSessionRow.id.desc())
            .limit(1)
        ).first()
        if newest is not None and newest[0]:
            found.append(UnrecordedTask(task_id, newest[0]))
    return found
