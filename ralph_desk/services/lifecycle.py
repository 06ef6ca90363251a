"""The one writer of a task's status: every move asks the lifecycle's rules first (DESIGN §7, §11)."""

from __future__ import annotations

from collections.abc import Callable, Collection

from ralph_desk.domain.checks import Verdict
from ralph_desk.domain.enums import TaskStatus
from ralph_desk.domain.lifecycle import Move, Mover, asks_about_branch, asks_about_checks, refusal
from ralph_desk.domain.records import Task
from ralph_desk.services.errors import ConflictError, NotFoundError
from ralph_desk.store import tasks as store
from ralph_desk.store.database import UnitOfWork

UnmergedWork = Callable[[int], bool]
"""Whether a task has a branch whose work was not merged (a git lookup, made only when a rule asks)."""
ChecksVerdict = Callable[[int], Verdict]
"""What a task's latest check runs say of the configured checks (read only when a rule asks)."""


def move(
    unit: UnitOfWork,
    task_id: int,
    target: TaskStatus,
    mover: Mover,
    unmerged: UnmergedWork | None = None,
    checks: ChecksVerdict | None = None,
    anyway: bool = False,
) -> Task:
    """Move a task to `target` (stamping started_at / completed_at) if `mover` may; else ConflictError.

    `anyway`: a review's merge the person chose although required checks fail."""
    current = store.status_of(unit, task_id)
    if current is None:
        raise NotFoundError("task", task_id)
    verdict = checks(task_id) if checks is not None and asks_about_checks(target, mover) else Verdict.NONE
    unmerged_work = _has_unmerged(task_id, target, mover, unmerged)
    check(Move(task_id, current, target, mover, unmerged_work, verdict, anyway))
    task = store.set_status(unit, task_id, target.value)
    assert task is not None
    return task


def settle(
    unit: UnitOfWork, task_id: int, current: TaskStatus, target: TaskStatus, count_stuck: bool
) -> Task:
    """The loop's move at the end of a session (one UPDATE), raising the stuck count if asked."""
    check(Move(task_id, current, target, Mover.LOOP))
    task = store.settle(unit, task_id, target.value, count_stuck)
    if task is None:
        raise NotFoundError("task", task_id)
    return task


def claim_next(unit: UnitOfWork, skip: Collection[int] = ()) -> Task | None:
    """The loop's claim of the next runnable task: pending to in_progress, no other loop taking it too."""
    return store.claim_next(unit, skip=skip)


def check(move_asked: Move) -> None:
    """Raise ConflictError when the lifecycle refuses the move (a caller may check before acting)."""
    problem = refusal(move_asked)
    if problem is not None:
        raise ConflictError(problem)


def _has_unmerged(task_id: int, target: TaskStatus, mover: Mover, unmerged: UnmergedWork | None) -> bool:
    return unmerged is not None and asks_about_branch(target, mover) and unmerged(task_id)
