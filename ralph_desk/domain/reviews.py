"""Records of work under review: a task waiting for a person, the commits its diff shows, comments on it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ralph_desk.domain.enums import DiffSide, ReviewCommentState
from ralph_desk.domain.records import AgentSession, TaskSummary

HUMAN = "human"
"""The author of what the person writes at the desk itself; a paired device writes under its name."""


@dataclass(frozen=True)
class ReviewComment:
    """A reviewer's comment on a task's diff: on a line (old or new file), a file, or the task."""

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
    side: DiffSide = DiffSide.NEW
    """The file `line` counts in: the new one, or the old one for a removed line."""

    @property
    def where(self) -> str:
        """`path:line`, `path:line (removed, old file)`, `path`, or '' for a comment on the whole task."""
        return where(self.file, self.line, self.side)

    @property
    def pending(self) -> bool:
        """Whether the human can still change it: theirs, and not yet sent to the agent."""
        return self.author == HUMAN and self.state is ReviewCommentState.OPEN


def where(file: str | None, line: int | None, side: DiffSide = DiffSide.NEW) -> str:
    """Where a comment is, in a few words: `path:line`, `path:line (removed, old file)`, `path` or ''."""
    if file is None:
        return ""
    if line is None:
        return file
    return f"{file}:{line}" + (" (removed, old file)" if side is DiffSide.OLD else "")


@dataclass(frozen=True)
class ReviewPin:
    """The commits a diff was read between: where the task branch left the base, and the branch's tip."""

    base: str
    tip: str


@dataclass(frozen=True)
class ReviewDiff:
    """A diff as read, with the commits it is pinned to (None without a branch) and the rule files it changes.

    For the whole task the pin is what approving merges; for one session it is that session's commits.
    """

    text: str
    pin: ReviewPin | None = None
    rules_changed: tuple[str, ...] = ()
    """Paths under the project's `.ralph/` (or `.ralph` itself) that the task branch changes."""


@dataclass(frozen=True)
class QueuedMerge:
    """An approved task waiting for its turn to merge, or whose merge was refused (and why)."""

    id: int
    task_id: int
    checkout: str
    approved_at: datetime
    refused: str | None
    commit: str | None = None
    """The commit the person approved: exactly this merges (None: queued before approvals were pinned)."""
    checks_overridden: str | None = None
    """The failing required checks the person chose to merge anyway (None: no such choice)."""
    approved_by: str | None = None
    """The paired device that approved it (None: the desk itself)."""


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
    pin: ReviewPin | None = None
    """The branch's commits when this was read: its tip is what `approve` must be given to merge it."""
    rules_changed: tuple[str, ...] = ()
    """Paths under the project's `.ralph/` the branch changes: flagged, and refused at approval."""


@dataclass(frozen=True)
class ReviewResult:
    """What a review decision did: the task's new status, the merge commit, conflicts, and why."""

    task_id: int
    status: str
    merged_commit: str | None = None
    conflicts: tuple[str, ...] = ()
    message: str = ""
