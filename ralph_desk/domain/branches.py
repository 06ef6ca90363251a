"""Which git branch belongs to which task: the record the desk writes when it makes a task's branch."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

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
