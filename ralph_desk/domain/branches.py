"""Which git branch belongs to which task: the record the desk writes when it makes a task's branch."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from ralph_desk.domain.enums import TaskStatus

HEADS = "refs/heads/"
BRANCH_PREFIX = "ralph/"
TASK_REF = re.compile(rf"{re.escape(HEADS + BRANCH_PREFIX)}(\d+)-[a-z0-9]+(?:-[a-z0-9]+)*")


def is_task_ref(ref: str) -> bool:
    """Whether `ref` is a full task-branch ref the desk could have made (`refs/heads/ralph/<id>-<slug>`)."""
    return TASK_REF.fullmatch(ref) is not None


@dataclass(frozen=True)
class TaskBranch:
    """A task branch the desk made in one checkout: its full ref, and whether the task that owns it lives.

    `task_id` is the id the task had; `alive` is false once that task is gone (deleted, or its id taken by
    a newer task), so a reused id never adopts the branch.
    """

    id: int
    task_id: int
    task_created_at: datetime
    checkout: str
    ref: str
    alive: bool

    @property
    def branch(self) -> str:
        """The branch's short name, for people to read (never passed to git)."""
        return self.ref.removeprefix(HEADS)


@dataclass(frozen=True)
class UnrecordedTask:
    """A live task without a branch record, and the commit its newest session left (where its branch was)."""

    task_id: int
    commit: str


DISCARDED_REFS = "refs/ralph/discarded/"
"""Where a discarded task branch is kept (outside `refs/heads/`: no branch listing shows it)."""
DISCARD_RETENTION = timedelta(days=30)
"""How long discarded work is kept before a later discard prunes it."""
_STAMP = "%Y%m%dT%H%M%S.%fZ"
DISCARDED_REF = re.compile(
    rf"{re.escape(DISCARDED_REFS)}(\d+)-(\d{{8}}T\d{{6}}\.\d{{6}}Z)-({'|'.join(s.value for s in TaskStatus)})"
)


@dataclass(frozen=True)
class Discarded:
    """A discarded task branch kept as a ref: whose, when, and the status its task had then."""

    ref: str
    task_id: int
    at: datetime
    status: TaskStatus

    @classmethod
    def named(cls, task_id: int, at: datetime, status: TaskStatus) -> Discarded:
        """The ref that keeps task `task_id`'s work discarded at `at` (aware UTC) from `status`."""
        stamp = at.astimezone(UTC).strftime(_STAMP)
        return cls(f"{DISCARDED_REFS}{task_id}-{stamp}-{status.value}", task_id, at, status)

    @classmethod
    def parse(cls, ref: str) -> Discarded | None:
        """The kept branch `ref` names, or None when it is not a ref the desk makes."""
        match = DISCARDED_REF.fullmatch(ref)
        if match is None:
            return None
        at = datetime.strptime(match.group(2), _STAMP).replace(tzinfo=UTC)
        return cls(ref, int(match.group(1)), at, TaskStatus(match.group(3)))
