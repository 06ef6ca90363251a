"""The task lifecycle: which moves between statuses each mover may make, as pure rules.

Every status write goes through one service function that asks `refusal` first, so a gate (work in
review is decided by review only; unmerged work is not declared done) holds on every path: the
window, the CLI, an agent's tool call, the loop, the inbox and the review itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ralph_desk.domain.checks import Verdict
from ralph_desk.domain.enums import TaskStatus


class Mover(StrEnum):
    """Who moves a task, which decides the moves allowed."""

    PERSON = "person"
    """The window's Tasks pane or the CLI: any move but those the gates keep for review and the loop."""
    AGENT = "agent"
    """An agent's `set_task_status` tool call: as a person, never into or out of review."""
    LOOP = "loop"
    """The loop: claiming a task, settling a session, recovering a crashed one."""
    REVIEW = "review"
    """A review decision: merge (done), send back (pending), discard (pending or skipped), and a discard
    taken back (in review again)."""
    INBOX = "inbox"
    """An inbox decision: an answer, an approved or rejected suggestion, a retried or skipped failure."""
    IMPORT = "import"
    """A PRD import or the demo building its project: states are copied, not decided."""


REVIEW_EXITS: frozenset[TaskStatus] = frozenset({TaskStatus.DONE, TaskStatus.PENDING, TaskStatus.SKIPPED})
"""Where a review decision may take a task."""

RESTORABLE: frozenset[TaskStatus] = frozenset({TaskStatus.PENDING, TaskStatus.SKIPPED})
"""Where a discard leaves a task, from which restoring its work puts it back in review."""

INBOX_TARGETS: frozenset[TaskStatus] = frozenset({TaskStatus.PENDING, TaskStatus.SKIPPED})
"""Where an inbox decision may take a task."""

LOOP_ONLY: frozenset[TaskStatus] = frozenset({TaskStatus.IN_REVIEW})
"""Statuses only the loop enters: in_review is reached by a session's done passing its gate."""

REVIEW_DECISIONS = (
    "review decisions are the human's (the window's Reviews tab, or "
    "`ralph-desk review approve|changes|discard {task_id}`)"
)


@dataclass(frozen=True)
class Move:
    """One asked-for status change of one task."""

    task_id: int
    current: TaskStatus
    target: TaskStatus
    mover: Mover
    unmerged_work: bool = False
    """The task has a branch whose work has not been merged (asked only for a move to done)."""
    checks: Verdict = Verdict.NONE
    """What the task's latest check runs say (asked only where a checks rule applies)."""
    anyway: bool = False
    """The person chose to merge although required checks fail (a review's "Merge anyway")."""


def asks_about_branch(target: TaskStatus, mover: Mover) -> bool:
    """Whether `refusal` needs to know if the task has unmerged work (a git lookup: skipped otherwise)."""
    return target is TaskStatus.DONE and mover in (Mover.PERSON, Mover.AGENT)


def asks_about_checks(target: TaskStatus, mover: Mover) -> bool:
    """Whether `refusal` needs the task's checks verdict (a database read: skipped otherwise)."""
    return target in (TaskStatus.DONE, TaskStatus.IN_REVIEW) and mover in (
        Mover.AGENT,
        Mover.LOOP,
        Mover.REVIEW,
    )


def refusal(move: Move) -> str | None:
    """Why the move is not allowed (one sentence with the way that is), or None when it is."""
    if move.current is move.target or move.mover is Mover.IMPORT:
        return None
    rule = _RULES[move.mover]
    return rule(move)


def _person(move: Move) -> str | None:
    if move.current is TaskStatus.IN_REVIEW and move.target is TaskStatus.DONE:
        return (
            f"task #{move.task_id} is in review: it is done only when a review merges its branch, so "
            f"approve it in Reviews (the Inbox's Reviews tab) or with `ralph-desk review approve "
            f"{move.task_id}`; " + REVIEW_DECISIONS.format(task_id=move.task_id)
        )
    if move.current is TaskStatus.IN_REVIEW:
        return (
            f"task #{move.task_id} is in review, and its status is not set by hand: "
            + REVIEW_DECISIONS.format(task_id=move.task_id)
        )
    if move.target in LOOP_ONLY:
        return (
            f"task #{move.task_id} cannot be put in review by hand: a task reaches review when a session's "
            "done passes the gate"
        )
    if move.target is TaskStatus.DONE and move.unmerged_work:
        return (
            f"task #{move.task_id} has work on its branch that was not merged, so it is not done by hand: "
            + REVIEW_DECISIONS.format(task_id=move.task_id)
        )
    return None


def _agent(move: Move) -> str | None:
    if move.target is TaskStatus.DONE and move.checks in (Verdict.NOT_RUN, Verdict.FAILED):
        return (
            f"task #{move.task_id} is done only when the project's checks pass: call done, and the desk runs "
            "them in your worktree"
        )
    return _person(move)


def _review(move: Move) -> str | None:
    if move.target is TaskStatus.IN_REVIEW:  # a discard taken back: its work is on a branch again
        if move.current in RESTORABLE:
            return None
        return (
            f"task #{move.task_id} is {move.current.value}; only a pending or skipped task has its discarded "
            "work put back in review"
        )
    if move.target not in REVIEW_EXITS:
        return f"a review moves task #{move.task_id} to done, pending or skipped, not {move.target.value}"
    if move.target is TaskStatus.DONE and move.checks is Verdict.FAILED and not move.anyway:
        return (
            f"task #{move.task_id}'s required checks fail, so it is merged only when the person chooses to "
            f"merge anyway (the window asks; `ralph-desk review approve {move.task_id} --anyway`), or after "
            "they pass again"
        )
    if move.current in (TaskStatus.IN_PROGRESS, TaskStatus.DONE):
        return (
            f"task #{move.task_id} is {move.current.value}; "
            "only a task that is neither running nor merged can be decided by a review"
        )
    return None


def _inbox(move: Move) -> str | None:
    if move.target not in INBOX_TARGETS:
        return f"an inbox decision moves task #{move.task_id} to pending or skipped, not {move.target.value}"
    if move.current is TaskStatus.IN_REVIEW:
        return f"task #{move.task_id} is in review: " + REVIEW_DECISIONS.format(task_id=move.task_id)
    return None


def _loop(move: Move) -> str | None:
    if move.target in (TaskStatus.DONE, TaskStatus.IN_REVIEW) and move.checks is Verdict.FAILED:
        return f"task #{move.task_id}'s required checks failed after its done: it goes back to its agent"
    # Back to pending is the loop's requeue of work it just put in review and then rejected (edits made
    # where none were allowed); any other way out of review is a person's decision.
    if move.current is TaskStatus.IN_REVIEW and move.target is not TaskStatus.PENDING:
        return f"task #{move.task_id} is in review, which the loop leaves alone: " + REVIEW_DECISIONS.format(
            task_id=move.task_id
        )
    return None


_RULES = {
    Mover.PERSON: _person,
    Mover.AGENT: _agent,
    Mover.REVIEW: _review,
    Mover.INBOX: _inbox,
    Mover.LOOP: _loop,
}
