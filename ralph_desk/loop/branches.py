"""The loop's git side (DESIGN §11): a task's session works in the task's worktree, its work is committed
on the task branch, and `done` waits for review (or merges at once when the gate is off)."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, replace
from pathlib import Path

from ralph_desk.domain.enums import (
    CLOSING_VERBS,
    FlagCategory,
    Recipe,
    SessionOutcome,
    Severity,
    TaskStatus,
    Verb,
)
from ralph_desk.domain.postprocess import Decision
from ralph_desk.loop.model import ReviewSettings, SessionPlan
from ralph_desk.loop.planner import plan_recipe_session
from ralph_desk.services.container import Services
from ralph_desk.services.errors import NotFoundError
from ralph_desk.services.merge_queue import MergeTurnError
from ralph_desk.services.reviews import ReviewError
from ralph_desk.services.workspaces import NoBaseBranchError, SessionCommit
from ralph_desk.vcs.places import Checkout, GitError
from ralph_desk.vcs.worktree_git import WorktreeIntegrityError
from ralph_desk.vcs.worktrees import TaskWorktree

log = logging.getLogger("ralph_desk.loop")

MAX_NAMED = 10


@dataclass(frozen=True)
class SessionWork:
    """Where a session works: its task's worktree, or the project folder (no task, or no git)."""

    root: Path
    worktree: TaskWorktree | None = None


def prepare(services: Services, plan: SessionPlan, project_root: Path) -> SessionWork:
    """The session's working folder: its task's worktree (made or repaired), else (outside git, or no task)
    the project folder. `NoBaseBranchError` in a git project without its base branch: a task never works
    in the person's own checkout."""
    if plan.task is None:
        return SessionWork(project_root)
    worktree = services.workspaces.prepare(plan.task.id, plan.task.title)
    if worktree is None:
        services.workspaces.require_base()
        if services.workspaces.is_git():  # the base came back meanwhile: prepare again, never the checkout
            raise NoBaseBranchError("the base branch changed while the session was prepared; start again")
        return SessionWork(project_root)
    try:
        conflicts = services.workspaces.catch_up(worktree)
    except UNCOMMITTABLE as error:
        _flag(services, plan.task.id, f"The base branch was not merged into this task's branch: {error}.")
        return SessionWork(worktree.path, worktree)
    if conflicts:
        what = (
            f"The base branch {worktree.base!r} moved on and was merged into this task's branch; these files "
            f"now hold conflict markers (<<<<<<<, =======, >>>>>>>): {', '.join(conflicts)}. Resolve every "
            "conflict keeping both the base's changes and this task's intent, then carry on with the task."
        )
        services.signals.record(
            plan.task.id,
            None,
            Verb.FLAG,
            what=what,
            severity=Severity.BLOCKING,
            category=FlagCategory.OVERLAP,
        )
    return SessionWork(worktree.path, worktree)


@dataclass(frozen=True)
class Lost:
    """A session whose place of work went away under it: why, and whether its task went too."""

    reason: str
    task_deleted: bool = False


def lost(services: Services, work: SessionWork, plan: SessionPlan) -> Lost | None:
    """Whether the session's task was deleted, or its worktree wrecked (deleted, removed, its `.git` broken),
    while its agent ran; None when both are there as they were."""
    if plan.task is None:
        return None
    if deleted_meanwhile(services, plan):
        return deleted(plan)
    if work.worktree is None:
        return None
    damage = services.workspaces.damage(work.worktree)
    if damage is None:
        return None
    path, root = work.worktree.path, services.paths.root
    shown = path.relative_to(root) if path.is_relative_to(root) else path
    return Lost(
        f"the task's worktree {shown} {damage} while the session ran, so nothing left in it was committed; "
        f"the work committed before stays on {work.worktree.branch}, and the next session gets the worktree "
        "again from that branch"
    )


UNCOMMITTABLE = (WorktreeIntegrityError, GitError)


def not_committed(error: Exception) -> Lost:
    """A session whose work could not be committed (`.git` tampered with, git failing): flagged, requeued."""
    return Lost(
        f"This session's work was NOT committed: {error}. The work committed before stays on the task branch"
    )


def deleted(plan: SessionPlan) -> Lost:
    """The session of a task deleted while it ran."""
    task_id = plan.task.id if plan.task is not None else None
    return Lost(f"task #{task_id} was deleted while its session ran; nothing was committed for it", True)


def deleted_meanwhile(services: Services, plan: SessionPlan) -> bool:
    """Whether the session's task is no longer in the database."""
    if plan.task is None:
        return False
    try:
        services.tasks.get(plan.task.id)
    except NotFoundError:
        return True
    return False


def flag_lost(services: Services, plan: SessionPlan, lost: Lost) -> None:
    """Flag the task whose worktree its agent wrecked (a person should know: the agent did it)."""
    assert plan.task is not None
    services.signals.record(
        plan.task.id,
        None,
        Verb.FLAG,
        what=lost.reason,
        severity=Severity.WARNING,
        category=FlagCategory.SECURITY,
    )


def requeue(decision: Decision, lost: Lost) -> Decision:
    """A session whose worktree was wrecked finishes nothing: `done` goes back to `pending`."""
    reasons = (*decision.reasons, lost.reason)
    if decision.status not in (TaskStatus.DONE, TaskStatus.IN_REVIEW):
        return replace(decision, reasons=reasons)
    return replace(decision, status=TaskStatus.PENDING, outcome=SessionOutcome.REQUEUED, reasons=reasons)


def git_place(services: Services, work: SessionWork) -> Path | Checkout:
    """Where the desk's git reads the session's work: its task worktree through the git folder the desk made
    (never through the `.git` the agent can re-aim; `WorktreeIntegrityError` when it was), else the folder."""
    if work.worktree is None:
        return work.root
    return services.workspaces.git_of(work.worktree)


def tip(services: Services, work: SessionWork) -> str | None:
    """The commit the session's task branch stands on (None outside git)."""
    return services.workspaces.head(work.worktree) if work.worktree is not None else None


def commit(services: Services, work: SessionWork, plan: SessionPlan, allowed: bool) -> SessionCommit | None:
    """Commit the session's work on its task branch (or stash it when edits were not allowed).

    A HEAD the agent moved and a nested repository left out of the commit each become a blocking flag on the
    task. A worktree whose `.git` was tampered with, or where git fails, raises one of `UNCOMMITTABLE`
    (nothing committed): the caller ends the session as `not_committed` says.
    """
    if work.worktree is None or plan.task is None:
        return None
    signals = services.signals.for_session(plan.session_id)
    closing = [signal for signal in signals if signal.verb in CLOSING_VERBS]
    verb = closing[-1].verb.value if closing else None
    said = (closing[-1].summary or closing[-1].remaining or closing[-1].reason) if closing else None
    task = plan.task
    made = services.workspaces.commit_session(work.worktree, task.title, plan.session_id, verb, said, allowed)
    branch = f"refs/heads/{work.worktree.branch}"
    if made.head_was is not None:
        _flag(
            services,
            task.id,
            f"The agent moved HEAD to {made.head_was}; its work was committed to the task branch {branch}, "
            "and HEAD is back on it. Work on the task branch only.",
        )
    if made.left_out:
        shown = ", ".join(made.left_out[:MAX_NAMED]) + (" …" if len(made.left_out) > MAX_NAMED else "")
        _flag(
            services,
            task.id,
            f"These folders hold a git repository of their own and were left out of the commit (a gitlink "
            f"would name a commit that exists nowhere else): {shown}. Their only copy is in the worktree "
            f"{work.worktree.path}; it is kept until they are dealt with.",
        )
    return made


def _flag(services: Services, task_id: int, what: str) -> None:
    services.signals.record(
        task_id, None, Verb.FLAG, what=what, severity=Severity.BLOCKING, category=FlagCategory.SECURITY
    )


def gate(services: Services, work: SessionWork, plan: SessionPlan, decision: Decision) -> Decision:
    """`done` on a task branch becomes `in_review`: a person (or, gate off, a clean merge) decides."""
    if work.worktree is None or plan.task is None or decision.status is not TaskStatus.DONE:
        return decision
    return replace(decision, status=TaskStatus.IN_REVIEW)


def after_review_gate(
    services: Services,
    review: ReviewSettings,
    plan: SessionPlan,
    decision: Decision,
    committed: SessionCommit | None = None,
) -> TaskStatus:
    """Mark the sent-back comments answered; with the gate off (or skipped), merge now the tip the session
    just committed (`committed.after`), nothing the branch holds after it. The task's status."""
    if plan.task is None or decision.status is not TaskStatus.IN_REVIEW:
        return decision.status
    services.reviews.addressed(plan.task.id, plan.session_id)
    if review.gate_applies(plan.task.discipline):
        return TaskStatus.IN_REVIEW
    try:
        tip = committed.after if committed is not None else None
        return TaskStatus(services.reviews.approve(plan.task.id, tip).status)
    except (ReviewError, MergeTurnError) as error:  # its approval stays queued for the next turn
        log.warning("task #%s stays in review: %s", plan.task.id, error)
        return TaskStatus.IN_REVIEW


REVIEWER = "reviewer agent"
DIFF_LIMIT = 60_000
_WHERE = re.compile(r"^`?([\w./@+-]+):(\d+)`?\s*[:—-]?\s*(.+)$", re.S)


def reviewer_session(
    services: Services, settings: ReviewSettings, plan: SessionPlan
) -> tuple[SessionPlan, set[int]] | None:
    """A read-only opus_review session over the diff of a task in review (setting reviewer_agent)."""
    if plan.task is None or not settings.reviewer_agent:
        return None
    task = services.tasks.get(plan.task.id)
    diff = services.reviews.diff(task.id).text if task.status is TaskStatus.IN_REVIEW else ""
    if not diff:
        return None
    shown = diff if len(diff) <= DIFF_LIMIT else diff[:DIFF_LIMIT] + "\n… (the diff goes on)"
    text = (
        f"Review the work of task #{task.id} '{task.title}' before a person does: read its diff below "
        f"against the task's intent. For each problem, call add_task_comment with task_id {task.id}, author "
        f"'{REVIEWER}', and a body that starts with `path:line:` when it is about one line. Do not change "
        f"the task or its status: the decision is the person's.\n\n```diff\n{shown}\n```"
    )
    review = plan_recipe_session(services, Recipe.OPUS_REVIEW, feature=task.feature, extra_input=text)
    return replace(review, read_only=True), {comment.id for comment in task.comments}


def take_reviewer_comments(services: Services, task_id: int, known: set[int]) -> int:
    """Turn the reviewer session's new task comments into review comments (file and line when named)."""
    taken = 0
    for comment in services.tasks.get(task_id).comments:
        if comment.id in known or comment.author == "human":
            continue
        match = _WHERE.match(comment.body.strip())
        file, line, body = (
            (match.group(1), int(match.group(2)), match.group(3)) if match else (None, None, comment.body)
        )
        services.reviews.add_comment(task_id, body, file=file, line=line, author=REVIEWER)
        taken += 1
    return taken
