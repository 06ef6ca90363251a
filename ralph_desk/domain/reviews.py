"""Records of work under review: a task waiting for a person, and the comments on its diff."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ralph_desk.domain.enums import ReviewCommentState
from ralph_desk.domain.records import AgentSession, TaskSummary

HUMAN = "human"


@dataclass(frozen=True)
class ReviewComment:
    """A reviewer's comment on a task's diff: on a file and line, or on the whole task."""

    id: int
    task_id: int
    author: str
    body: str
    file: str | None
    line: int | None
    state: ReviewCommentState
    session_id: str | None
    addressed_session_id: str | None
    created_at: datetime

    @property
    def where(self) -> str:
        """`path:line`, `path`, or '' for a comment on the whole task."""
        if self.file is None:
            return ""
        return f"{self.file}:{self.line}" if self.line is not None else self.file


@dataclass(frozen=True)
class QueuedMerge:
    """An approved task waiting for its turn to merge, or whose merge was refused (and why)."""

    id: int
    task_id: int
    checkout: str
    approved_at: datetime
    refused: str | None


@dataclass(frozen=True)
class ReviewItem:
    """A task in review: what the agent said, its sessions, and the branch to compare with the base."""

    task: TaskSummary
    summary: str | None
    sessions: tuple[AgentSession, ...]
    branch: str | None
    base: str | None
    worktree: str | None
    comments: tuple[ReviewComment, ...] = ()
    merge: str | None = None  # approved and waiting to merge, or why its merge was refused


@dataclass(frozen=True)
class ReviewResult:
    """What a review decision did: the task's new status, the merge commit, conflicts, and why."""

    task_id: int
    status: str
    merged_commit: str | None = None
    conflicts: tuple[str, ...] = ()
    message: str = ""
