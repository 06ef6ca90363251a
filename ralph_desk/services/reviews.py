"""Work under review (DESIGN §11): tasks in review, their diffs and comments, and the human's decisions.

Review decisions are the human's: the window and the CLI call them, no MCP tool does.
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from ralph_desk.domain.branches import DISCARD_RETENTION
from ralph_desk.domain.checks import CheckRun, Verdict, required_failures
from ralph_desk.domain.diffs import CONTEXT_LINES
from ralph_desk.domain.enums import (
    DiffSide,
    FlagCategory,
    MergeStrategy,
    ReviewCommentState,
    Severity,
    TaskStatus,
    Verb,
)
from ralph_desk.domain.lifecycle import Move, Mover
from ralph_desk.domain.listing import ItemError, Listing
from ralph_desk.domain.records import AgentSession, Task
from ralph_desk.domain.reviews import (
    HUMAN,
    QueuedMerge,
    ReviewComment,
    ReviewDiff,
    ReviewItem,
    ReviewPin,
    ReviewResult,
)
from ralph_desk.domain.tools import ClearableText
from ralph_desk.project.untrusted import UntrustedCommandError, require_trusted_checks
from ralph_desk.services import lifecycle, merge_checks
from ralph_desk.services import validation as check
from ralph_desk.services.checks import CheckService
from ralph_desk.services.errors import ConflictError, InvalidValueError, NotFoundError, ServiceError
from ralph_desk.services.merge_queue import WAIT_S, merge_turn
from ralph_desk.services.sessions import SessionService
from ralph_desk.services.signals import SignalService
from ralph_desk.services.tasks import TaskService
from ralph_desk.services.workspaces import WorkspaceService
from ralph_desk.store import comments as comments_store
from ralph_desk.store import mapping
from ralph_desk.store import merge_queue as queue
from ralph_desk.store import reviews as store
from ralph_desk.store import tasks as task_store
from ralph_desk.store.database import Database, UnitOfWork
from ralph_desk.store.errors import StoreDataError
from ralph_desk.vcs import diffs, merging
from ralph_desk.vcs.places import GitError
from ralph_desk.vcs.worktrees import TaskWorktree

log = logging.getLogger("ralph_desk.reviews")

BODY_LIMIT = 10_000
SESSION_LIMIT = 500
UPDATE_INSTRUCTION = (
    "bring the task branch up to date with the base branch {base!r}: its next session starts with the "
    "base merged into the branch and the conflicts marked in the files named; resolve them, keep the "
    "task's intent, then call done again"
)


@dataclass(frozen=True)
class CommentDraft:
    """A comment to add: its text, and optionally its file and line (in the new file, or the old)."""

    body: str
    file: str | None = None
    line: int | None = None
    side: DiffSide | str = DiffSide.NEW


class ReviewError(ConflictError):
    """A review decision that cannot be carried out now; nothing was changed."""


class ReviewMovedError(ReviewError):
    """The task branch is not at the commit approved (it moved since its diff was read); nothing merged."""

    def __init__(self, task_id: int, approved: str | None, tip: str | None) -> None:
        if tip is None:
            now = "its branch is gone"
        elif approved is None:
            now = f"approving it needs the commit whose diff you read; its branch is at {tip}"
        else:
            now = f"its branch moved since its diff was read: it is at {tip} now, not {approved}"
        super().__init__(
            f"task #{task_id} was not approved: {now}; nothing was merged — read its diff again, approve that"
        )
        self.task_id = task_id
        self.approved = approved
        self.tip = tip


class ChecksFailingError(ReviewError):
    """The task's required checks fail: it merges only when the person chooses to merge anyway."""

    def __init__(self, task_id: int, failing: str) -> None:
        super().__init__(
            f"task #{task_id} was not approved: its required checks fail ({failing}); run them again, or "
            f"merge anyway (the window asks; `ralph-desk review approve {task_id} --anyway`)"
        )
        self.task_id = task_id
        self.failing = failing


RESTORE = "`ralph-desk review restore {}` brings it back"


class UnsentCommentsError(ReviewError):
    """Approving would leave the person's unsent comments behind: they are sent, or dropped on purpose."""

    def __init__(self, task_id: int, count: int) -> None:
        them = "it" if count == 1 else "them"
        super().__init__(
            f"task #{task_id} was not approved: it has {count} unsent comment{'s' if count != 1 else ''}; "
            f"send {them} to its agent (request changes: `ralph-desk review changes {task_id}`), or merge "
            f"and drop {them} (the window asks; `ralph-desk review approve {task_id} --drop-comments`)"
        )
        self.task_id = task_id
        self.count = count


MOVED = "the branch moved since it was approved: review it again"
MERGED_ANYWAY_MARK = "Merge anyway: "
MERGED_ANYWAY = MERGED_ANYWAY_MARK + "approved although its required checks failed ({failing})"
RULES = (
    "the task branch changes the project's rules under .ralph/ ({paths}); a task branch may not change "
    "them: remove those changes from the branch (request changes so that its agent restores them as they "
    "are on the base), then approve again"
)


class ReviewService:
    """List the tasks in review, show their diffs, keep comments, and approve, send back or discard them."""

    def __init__(
        self,
        db: Database,
        workspaces: WorkspaceService,
        tasks: TaskService,
        sessions: SessionService,
        signals: SignalService,
        checks: CheckService,
    ) -> None:
        self.db = db
        self.workspaces = workspaces
        self.tasks = tasks
        self.sessions = sessions
        self.signals = signals
        self.checks = checks

    def list(self) -> Listing[ReviewItem]:
        """Every task in review, oldest first, with what its agent said and its branch; a task whose
        stored text cannot be read is an error in `errors`."""
        summaries = self.tasks.list(status=TaskStatus.IN_REVIEW)
        items: builtins.list[ReviewItem] = []
        errors = builtins.list(summaries.errors)
        for summary in sorted(summaries, key=lambda task: task.updated_at):
            try:
                items.append(self.get(summary.id))
            except (StoreDataError, ReviewError) as error:
                errors.append(ItemError("task", summary.id, str(error)))
        return Listing(items, errors)

    def get(self, task_id: int) -> ReviewItem:
        """One task's review: the agent's summary, its sessions (oldest first), branch, base and comments."""
        task = self.tasks.get(task_id)
        worktree = self._worktree(task.id)
        pinned = self._pin(worktree) if worktree else None
        return ReviewItem(
            task=mapping.summary_of(task),
            summary=self._done_summary(task.id),
            sessions=tuple(self._sessions(task.id)),
            branch=worktree.branch if worktree else None,
            base=worktree.base if worktree else self.workspaces.base_branch(),
            worktree=str(worktree.path) if worktree else None,
            comments=tuple(self.comments(task.id)),
            merge=self.merge_state(task.id),
            pin=pinned,
            rules_changed=self._rules(pinned) if pinned else (),
        )

    def diff(
        self, task_id: int, session_id: int | str | None = None, context: int = CONTEXT_LINES
    ) -> ReviewDiff:
        """The unified diff of the task branch against its base, or of one session's commit, with the
        commits it was read between (for the whole task: the tip that approving it merges) and the paths
        under `.ralph/` the branch changes.

        `session_id` is a session's id, or its number among the task's sessions (1 = the first); `context`
        the unchanged lines shown around each change (more, to read a change in its surroundings).
        """
        context = check.context_lines("context", context)
        task = self.tasks.get(task_id)
        worktree = self._worktree(task.id)
        pinned = self._pin(worktree) if worktree else None
        rules = self._rules(pinned) if pinned else ()
        if session_id is not None:
            session = self._session(task.id, session_id)
            before, after = session.head_before, session.head_after
            if not before or not after or before == after:
                return ReviewDiff("", rules_changed=rules)
            if not diffs.is_oid(before) or not diffs.is_oid(after):
                raise ReviewError(f"session {session.id} records commits that are not object ids: no diff")
            text = self._git(lambda: diffs.between(self.workspaces.root, before, after, context))
            return ReviewDiff(text, ReviewPin(before, after), rules)
        if pinned is None:
            return ReviewDiff("")
        return ReviewDiff(
            self._git(lambda: diffs.of_pin(self.workspaces.root, pinned, context)), pinned, rules
        )

    def comments(self, task_id: int) -> builtins.list[ReviewComment]:
        """A task's review comments, oldest first."""
        task_id = check.positive_int("task_id", task_id)
        with self.db.read() as unit:
            return store.list_for(unit, task_id)

    def add_comment(
        self,
        task_id: int,
        text: str,
        file: str | None = None,
        line: int | None = None,
        author: str = HUMAN,
        session_id: str | None = None,
        side: DiffSide | str = DiffSide.NEW,
    ) -> ReviewComment:
        """Add a comment on the diff: on a line (new file, or a removed one of the old), a file, the task."""
        task = self.tasks.get(task_id)
        draft = _checked(CommentDraft(text, file, line, side))
        with self.db.write() as unit:
            return store.add(
                unit, task.id, author, draft.body, draft.file, draft.line, session_id, DiffSide(draft.side)
            )

    def edit_comment(self, comment_id: int, text: str) -> ReviewComment:
        """Change the text of the human's own comment, while it waits for the review's decision."""
        body = _checked(CommentDraft(text)).body
        with self.db.write() as unit:
            return store.edit(unit, self._pending(unit, comment_id, "edited"), body)

    def delete_comment(self, comment_id: int) -> ReviewComment:
        """Delete the human's own comment, while it waits for the review's decision; the comment deleted."""
        with self.db.write() as unit:
            comment = self._pending(unit, comment_id, "deleted")
            store.remove(unit, comment)
            return comment

    def _pending(self, unit: UnitOfWork, comment_id: int, verb: str) -> ReviewComment:
        """The comment, if the human may still change it: theirs, unsent, its task in review, not approved."""
        comment = store.get(unit, check.positive_int("comment_id", comment_id))
        if comment is None:
            raise NotFoundError("review comment", comment_id, [])
        if not comment.pending:
            whose = (
                f"written by {comment.author}"
                if comment.author != HUMAN
                else "sent to the agent"
                if comment.state is ReviewCommentState.REQUESTED
                else "closed (answered by its agent, or dropped at its merge)"
            )
            raise ReviewError(f"comment #{comment.id} is {whose}; only your unsent comments can be {verb}")
        status = task_store.status_of(unit, comment.task_id)
        if status is not TaskStatus.IN_REVIEW or queue.entry(unit, comment.task_id) is not None:
            decided = "approved" if status is TaskStatus.IN_REVIEW else status.value if status else "deleted"
            raise ReviewError(
                f"the review of task #{comment.task_id} is decided ({decided}); "
                f"its comments can no longer be {verb}"
            )
        return comment

    def approve(
        self,
        task_id: int,
        commit: str | None,
        wait_s: float = WAIT_S,
        anyway: bool = False,
        drop_comments: bool = False,
        *,
        by: str | None = None,
    ) -> ReviewResult:
        """Approve exactly `commit`, the tip of the diff the person read (None only for a task without a
        branch): queue its merge (the approval is recorded first), then merge the queue in approval order.

        A branch no longer at `commit` raises ReviewMovedError (with its tip now) and one that changes the
        project's `.ralph/` raises ReviewError; nothing is queued then. Every process sharing the checkout
        merges from the one queue in the database, one at a time (services/merge_queue.py); an approval
        another process merged meanwhile reports what became of it. A merge refused (uncommitted changes in
        the way, the branch moved since) raises ReviewError and stays noted on the task; a turn not had
        within `wait_s` raises MergeBusyError, the approval still queued for the holder.

        A task with the person's unsent comments raises UnsentCommentsError unless they chose to
        `drop_comments` (then those are marked addressed with the approval): nothing they wrote is lost
        unseen.

        A task whose required checks fail raises ChecksFailingError unless the person chose `anyway`; that
        choice is recorded with the approval (its failing checks named). With required checks configured,
        each merge is checked on the merged result before the base moves (services/merge_checks.py): one
        that fails sends the task back to its agent with a flag, unless the person merged anyway.

        `by`: the paired device approving, kept with the approval (None: the desk itself).
        """
        maker = check.maker(by)
        task = self._in_review(task_id)
        approved = _commit(commit)
        worktree = self._worktree(task.id)
        if worktree is not None:
            self._check_approvable(task.id, self._pin(worktree), approved)
        elif approved is not None:
            raise ReviewError(f"task #{task.id} has no branch to merge; approve it without a commit")
        unsent = self.unsent(task.id)
        if unsent and not drop_comments:
            raise UnsentCommentsError(task.id, len(unsent))
        failing = self.failing_checks(task.id)
        if failing and not anyway:
            raise ChecksFailingError(task.id, failing)
        with self.db.write() as unit:
            if unsent:
                store.move(unit, task.id, ReviewCommentState.OPEN, ReviewCommentState.ADDRESSED)
            queue.enqueue(unit, task.id, self.workspaces.checkout, approved, failing or None, maker)
            if failing:  # the person's choice stays on the task's review, after the queue entry is gone
                note = MERGED_ANYWAY.format(failing=failing)
                store.add(unit, task.id, maker or HUMAN, note, None, None, None)
            if maker:  # who approved outlives the queue entry (removed at the merge)
                shown = f" {approved[:12]}" if approved else ""
                comments_store.add(unit, task.id, {"author": maker, "body": f"Approved{shown} for merge."})
        outcomes = self.merge_queued(wait_s)
        outcome = outcomes.get(task.id)
        if outcome is None:
            return self._merged_elsewhere(task.id)
        if isinstance(outcome, ReviewError):
            raise outcome
        return outcome

    def unsent(self, task_id: int) -> builtins.list[ReviewComment]:
        """The person's comments on a task not sent to its agent yet (a Merge anyway note is not one)."""
        return [
            comment
            for comment in self.comments(task_id)
            if comment.pending and not comment.body.startswith(MERGED_ANYWAY_MARK)
        ]

    def failing_checks(self, task_id: int) -> str:
        """The task's required checks whose latest run failed, named with how (empty: none fails)."""
        configured = {check.name for check in self.workspaces.config().checks if check.required}
        failed = [run for run in required_failures(self.checks.latest(task_id)) if run.name in configured]
        return ", ".join(f"{run.name} {run.status.value}" for run in failed)

    def _mark_done(self, unit: UnitOfWork, task_id: int, anyway: bool) -> None:
        """The review's move to done (merged), asking the checks rule first."""
        lifecycle.move(unit, task_id, TaskStatus.DONE, Mover.REVIEW, checks=self._verdict, anyway=anyway)

    def _verdict(self, task_id: int) -> Verdict:
        return self.checks.verdict(task_id, self.workspaces.config().checks)

    def merge_queued(self, wait_s: float = WAIT_S) -> dict[int, ReviewResult | ReviewError]:
        """Merge every approved task of this checkout still waiting, in approval order; what became of each.

        Run after any approval and when a loop starts: an approval whose process died before its merge is
        merged by the next process that gets here.
        """
        outcomes: dict[int, ReviewResult | ReviewError] = {}
        checkout = self.workspaces.checkout
        with self.db.read() as unit:
            if not queue.waiting(unit, checkout):
                return outcomes
        with merge_turn(self.workspaces.paths, wait_s):
            while True:
                with self.db.read() as unit:
                    waiting = queue.waiting(unit, checkout)
                head = next((entry for entry in waiting if entry.task_id not in outcomes), None)
                if head is None:
                    return outcomes
                outcomes[head.task_id] = self._merge_turn(head)

    def queue_ungated(self) -> builtins.list[int]:
        """Queue the tasks in review that wait for no person (the gate is off for them) and have no approval
        yet, whose branch is in this checkout: a loop stopped between their `done` and their merge."""
        found: builtins.list[int] = []
        for task in self.tasks.list(status=TaskStatus.IN_REVIEW):
            if self.gate_applies(task.discipline) or self.queued(task.id) is not None:
                continue
            worktree = self._worktree(task.id)
            if worktree is None:  # another machine's task: its branch is not here
                continue
            tip = self._pin(worktree).tip  # no person reads it: the tip now, checked again at its turn
            with self.db.write() as unit:
                queue.enqueue(unit, task.id, self.workspaces.checkout, tip)
            found.append(task.id)
        return found

    def queued(self, task_id: int) -> QueuedMerge | None:
        """A task's approval waiting to merge (or refused), None when it was not approved."""
        with self.db.read() as unit:
            return queue.entry(unit, check.positive_int("task_id", task_id))

    def merge_state(self, task_id: int) -> str | None:
        """`approved: merges after N others`, `not merged: why` (`approved by <device>` when a paired device
        approved), or None for a task not approved."""
        with self.db.read() as unit:
            entry = queue.entry(unit, check.positive_int("task_id", task_id))
            ahead = queue.ahead_of(unit, entry) if entry is not None and entry.refused is None else 0
        if entry is None:
            return None
        approved = f"approved by {entry.approved_by}" if entry.approved_by else "approved"
        if entry.refused is not None:
            return f"{approved}, not merged: {entry.refused}"
        return f"{approved}: merges after {ahead} other approval(s)" if ahead else f"{approved}: merging next"

    def _merge_turn(self, entry: QueuedMerge) -> ReviewResult | ReviewError:
        """Merge one queued approval (its turn held): merged, sent back on conflict, or refused and noted."""
        task = self.tasks.get(entry.task_id)
        if task.status is not TaskStatus.IN_REVIEW:  # sent back or discarded since its approval
            with self.db.write() as unit:
                queue.remove(unit, task.id)
            return ReviewError(f"task #{task.id} is {task.status.value} now; its approval was dropped")
        try:
            return self._approve(task, entry.commit, entry.checks_overridden is not None)
        except ReviewError as error:
            with self.db.write() as unit:
                queue.refuse(unit, task.id, str(error).removeprefix(f"task #{task.id} was not merged: "))
            log.warning("%s", error)
            return error

    def _merged_elsewhere(self, task_id: int) -> ReviewResult:
        """What became of an approval that another process merged from the queue."""
        task = self.tasks.get(task_id)
        if task.status is TaskStatus.IN_REVIEW:
            state = self.merge_state(task.id) or "not approved"
            raise ReviewError(f"task #{task.id} stays in review: {state}")
        merged = task.status is TaskStatus.DONE
        what = (
            "merged by another process's turn at the queue"
            if merged
            else "sent back to its agent (its flag says why)"
        )
        return ReviewResult(task.id, task.status.value, message=what)

    def _approve(self, task: Task, commit: str | None, anyway: bool = False) -> ReviewResult:
        worktree = self._worktree(task.id)
        if worktree is None and commit is not None:
            raise ReviewError(f"task #{task.id} was not merged: {MOVED} (its branch is gone)")
        if worktree is None:
            with self.db.write() as unit:
                lifecycle.move(
                    unit, task.id, TaskStatus.DONE, Mover.REVIEW, checks=self._verdict, anyway=anyway
                )
                queue.remove(unit, task.id)
            return ReviewResult(task.id, TaskStatus.DONE.value, message="approved (no branch to merge)")
        strategy = MergeStrategy(self.workspaces.config().merge_strategy)
        text = f"Merge task #{task.id}: {task.title}\n\n{self._done_summary(task.id) or ''}".rstrip() + (
            f"\n\nRalph-Task: {task.id}\n"
        )
        pinned = self._pin(worktree)
        try:
            self._check_approvable(task.id, pinned, commit)
        except ReviewMovedError:
            raise ReviewError(f"task #{task.id} was not merged: {MOVED} (it is at {pinned.tip})") from None
        try:  # the commit approved (checked to be the tip), by its id: never a name that can move
            result = self._merge(task, worktree, pinned.tip, strategy, text, anyway)
        except merging.MergeRefusedError as error:
            raise ReviewError(f"task #{task.id} was not merged: {error}") from None
        except GitError as error:
            raise ReviewError(f"task #{task.id} was not merged: {error}") from None
        if isinstance(result, ReviewResult):
            return result
        if not result.merged:
            return self._send_back(task, worktree, result)
        with self.db.write() as unit:  # done and off the queue at once: a crash before this merges again
            self._mark_done(unit, task.id, anyway)
            store.move(unit, task.id, ReviewCommentState.REQUESTED, ReviewCommentState.ADDRESSED)
            queue.remove(unit, task.id)
        self._remove(task.id)
        return ReviewResult(
            task.id,
            TaskStatus.DONE.value,
            merged_commit=result.commit,
            message=f"merged {worktree.branch} into {worktree.base} ({strategy.value})",
        )

    def _merge(
        self, task: Task, worktree: TaskWorktree, tip: str, strategy: MergeStrategy, text: str, anyway: bool
    ) -> merging.MergeResult | ReviewResult:
        """Merge `tip` into the base; with required checks configured, the base moves only to a merged
        result they passed on (or failed on, when the person merged anyway), else the task is sent back."""
        config = self.workspaces.config()
        if not merge_checks.required(config):
            return merging.merge(self.workspaces.root, worktree.base, tip, strategy, text)
        try:
            require_trusted_checks(self.workspaces.paths, config)
        except UntrustedCommandError:
            raise ReviewError(f"task #{task.id} was not merged: {merge_checks.UNTRUSTED}") from None
        planned = merging.plan(self.workspaces.root, worktree.base, tip, strategy, text)
        if isinstance(planned, merging.MergeResult):
            return planned
        failed = required_failures(merge_checks.run(self.checks, self.workspaces, config, task.id, planned))
        if failed and not anyway:
            return self._refuse_merged(task, tip, planned, failed)
        return merging.land(self.workspaces.root, planned)

    def _refuse_merged(
        self, task: Task, tip: str, planned: merging.Planned, failed: builtins.list[CheckRun]
    ) -> ReviewResult:
        """A merged result that failed its checks: the base stays, the task returns to its agent."""
        found = merge_checks.collided(self.workspaces, tip, planned, task.id)
        others = [self._named(other) for other in found]
        what = merge_checks.failure_flag(task.id, planned, failed, others)
        return self._return_to_agent(task, what, Severity.BLOCKING)

    def _named(self, task_id: int) -> str:
        """`#id title`, or `#id` for a task the database no longer has."""
        try:
            return f"#{task_id} {self.tasks.get(task_id).title}"
        except NotFoundError:
            return f"#{task_id}"

    def request_changes(
        self, task_id: int, comments: Sequence[CommentDraft | str] = (), *, by: str | None = None
    ) -> ReviewResult:
        """Send the task back to its agent: its open comments (and these) open the next session's prompt.

        The comments given are written `by` the paired device sending it back (None: the desk, `human`).
        """
        author = check.maker(by) or HUMAN
        task = self._in_review(task_id)
        drafts = [_checked(CommentDraft(item) if isinstance(item, str) else item) for item in comments]
        with self.db.write() as unit:
            for draft in drafts:
                store.add(
                    unit, task.id, author, draft.body, draft.file, draft.line, side=DiffSide(draft.side)
                )
            moved = store.move(unit, task.id, ReviewCommentState.OPEN, ReviewCommentState.REQUESTED)
            if not moved and not store.list_for(unit, task.id, (ReviewCommentState.REQUESTED,)):
                raise InvalidValueError(
                    "comments", list(comments), "at least one comment saying what to change"
                )
            queue.remove(unit, task.id)
            lifecycle.move(unit, task.id, TaskStatus.PENDING, Mover.REVIEW)
        return ReviewResult(task.id, TaskStatus.PENDING.value, message=f"sent back with {moved} comment(s)")

    def discard(self, task_id: int, skip: bool) -> ReviewResult:
        """Drop the task's branch and worktree, its work kept as a ref for a while (`restore` brings it
        back); the task starts again from the base, or is skipped."""
        task = self.tasks.get(task_id)
        status = TaskStatus.SKIPPED if skip else TaskStatus.PENDING
        self._check_move(task, status)  # before the branch goes: a refused discard loses nothing
        try:
            kept = self.workspaces.discard(task.id, task.status)
        except GitError as error:
            raise ReviewError(f"task #{task.id} was not discarded: git failed: {error}") from None
        with self.db.write() as unit:
            for state in (ReviewCommentState.OPEN, ReviewCommentState.REQUESTED):
                store.move(unit, task.id, state, ReviewCommentState.ADDRESSED)
            queue.remove(unit, task.id)
            lifecycle.move(unit, task.id, status, Mover.REVIEW)
        said = "branch and worktree discarded"
        if kept is not None:
            days = DISCARD_RETENTION.days
            said += f"; the work is kept as {kept.ref} for {days} days ({RESTORE.format(task.id)})"
        return ReviewResult(task.id, status.value, message=said)

    def restore(self, task_id: int) -> ReviewResult:
        """Take back the task's newest discard: its branch made again from the work kept, the task back in
        the status it had (in review, or pending)."""
        task = self.tasks.get(task_id)
        try:
            kept = self.workspaces.discarded(task.id, task.created_at)
        except GitError as error:
            raise ReviewError(f"task #{task.id}: git failed: {error}") from None
        if kept is None:
            raise ReviewError(
                f"task #{task.id} has no discarded work to restore (discarded work is kept "
                f"{DISCARD_RETENTION.days} days)"
            )
        status = TaskStatus.IN_REVIEW if kept.status is TaskStatus.IN_REVIEW else TaskStatus.PENDING
        self._check_move(task, status)
        try:
            worktree = self.workspaces.restore(task.id, task.title, kept)
        except (GitError, ServiceError) as error:
            raise ReviewError(f"task #{task.id} was not restored: {error}") from None
        with self.db.write() as unit:
            lifecycle.move(unit, task.id, status, Mover.REVIEW)
        return ReviewResult(task.id, status.value, message=f"work restored on {worktree.branch}")

    def _check_move(self, task: Task, status: TaskStatus) -> None:
        """Refuse (ReviewError) a review's move the lifecycle does not allow, before anything is done."""
        try:
            lifecycle.check(Move(task.id, task.status, status, Mover.REVIEW))
        except ConflictError as error:
            raise ReviewError(str(error)) from None

    def requested(self, task_id: int) -> builtins.list[ReviewComment]:
        """The comments sent back to the agent and not yet answered by a session that called done."""
        with self.db.read() as unit:
            return store.list_for(
                unit, check.positive_int("task_id", task_id), (ReviewCommentState.REQUESTED,)
            )

    def addressed(self, task_id: int, session_id: str) -> int:
        """Mark the sent-back comments answered by `session_id` (it called done); how many."""
        with self.db.write() as unit:
            return store.move(
                unit,
                check.positive_int("task_id", task_id),
                ReviewCommentState.REQUESTED,
                ReviewCommentState.ADDRESSED,
                session_id,
            )

    def gate_applies(self, discipline: str) -> bool:
        """Whether done work of this discipline waits for a person (a git project, gate on, not skipped)."""
        config = self.workspaces.config()
        return config.review_gate and discipline not in config.review_skip_disciplines

    def _in_review(self, task_id: int) -> Task:
        task = self.tasks.get(task_id)
        if task.status is not TaskStatus.IN_REVIEW:
            raise ReviewError(
                f"task #{task.id} is {task.status.value}, not in_review; only work in review is decided"
            )
        return task

    def _send_back(self, task: Task, worktree: TaskWorktree, result: merging.MergeResult) -> ReviewResult:
        """A merge that did not apply: the task returns to its agent with a flag naming the files."""
        files = ", ".join(result.conflicts) or "(none named)"
        what = (
            f"Merging task #{task.id} into {worktree.base!r} was aborted ({result.reason}); "
            f"conflicting files: {files}. Please {UPDATE_INSTRUCTION.format(base=worktree.base)}."
        )
        returned = self._return_to_agent(task, what, Severity.WARNING)
        return ReviewResult(returned.task_id, returned.status, conflicts=result.conflicts, message=what)

    def _return_to_agent(self, task: Task, what: str, severity: Severity) -> ReviewResult:
        """An approval that did not merge: off the queue, the task back to its agent, a flag saying why."""
        self.signals.record(
            task.id, None, Verb.FLAG, what=what, severity=severity, category=FlagCategory.OVERLAP
        )
        with self.db.write() as unit:
            lifecycle.move(unit, task.id, TaskStatus.PENDING, Mover.REVIEW)
            queue.remove(unit, task.id)
        return ReviewResult(task.id, TaskStatus.PENDING.value, message=what)

    def _pin(self, worktree: TaskWorktree) -> ReviewPin:
        """The task branch's commits now: where it left the base, and its tip."""
        try:
            return diffs.pin(self.workspaces.root, worktree.base, worktree.branch)
        except GitError as error:
            raise ReviewError(f"task #{worktree.task_id}: git failed: {error}") from None

    def _rules(self, pinned: ReviewPin) -> tuple[str, ...]:
        """The paths under the project's `.ralph/` that the pinned branch changes."""
        try:
            return diffs.rules_changed(self.workspaces.root, pinned)
        except GitError as error:
            raise ReviewError(f"git failed: {error}") from None

    def _check_approvable(self, task_id: int, pinned: ReviewPin, commit: str | None) -> None:
        """Refuse an approval of a commit that is not the branch's tip, or of a branch changing `.ralph/`."""
        if commit != pinned.tip:
            raise ReviewMovedError(task_id, commit, pinned.tip)
        rules = self._rules(pinned)
        if rules:
            raise ReviewError(f"task #{task_id} was not merged: {RULES.format(paths=', '.join(rules))}")

    def _worktree(self, task_id: int) -> TaskWorktree | None:
        try:
            return self.workspaces.existing(task_id)
        except GitError as error:
            raise ReviewError(f"task #{task_id}: git failed: {error}") from None

    def _remove(self, task_id: int) -> None:
        try:
            self.workspaces.remove(task_id)
        except GitError:
            log.warning("could not remove the worktree of task #%s", task_id, exc_info=True)

    def _sessions(self, task_id: int) -> builtins.list[AgentSession]:
        return builtins.list(reversed(self.sessions.list(task_id=task_id, limit=SESSION_LIMIT)))

    def _session(self, task_id: int, session_id: int | str) -> AgentSession:
        sessions = self._sessions(task_id)
        if isinstance(session_id, int) and not isinstance(session_id, bool):
            if 1 <= session_id <= len(sessions):
                return sessions[session_id - 1]
            raise InvalidValueError("session", session_id, f"a session number from 1 to {len(sessions)}")
        for session in sessions:
            if session.id == session_id:
                return session
        raise NotFoundError(f"session of task #{task_id}", session_id, [session.id for session in sessions])

    def _done_summary(self, task_id: int) -> str | None:
        said = [signal for signal in self.signals.for_task(task_id) if signal.verb is Verb.DONE]
        return said[-1].summary if said else None

    def _git(self, call: Callable[[], str]) -> str:
        try:
            return call()
        except GitError as error:
            raise ReviewError(f"git failed: {error}") from None


def _commit(value: str | None) -> str | None:
    """A commit as approved: a full object id (hex), or None."""
    if value is None:
        return None
    commit = value.strip().lower() if isinstance(value, str) else value
    if not isinstance(commit, str) or not diffs.is_oid(commit):
        raise InvalidValueError(
            "commit", value, "the full commit id (40 hex digits) that `ralph-desk review show` prints"
        )
    return commit


def _checked(draft: CommentDraft) -> CommentDraft:
    """A comment with text, a relative file path inside the project, and a line only with a file."""
    body = draft.body.strip() if isinstance(draft.body, str) else ""
    if not body or len(body) > BODY_LIMIT:
        raise InvalidValueError("comment", draft.body, f"a text of 1 to {BODY_LIMIT} characters")
    check.value(ClearableText, "comment", body)  # NUL or a lone surrogate is refused, naming the field
    file = draft.file.strip() if draft.file else None
    if file is not None:
        check.value(ClearableText, "file", file)
        path = PurePosixPath(file.replace("\\", "/"))
        if path.is_absolute() or ".." in path.parts:
            raise InvalidValueError("file", draft.file, "a path relative to the project, without '..'")
        file = str(path)
    if draft.line is not None:
        if file is None:
            raise InvalidValueError("line", draft.line, "a line only together with a file")
        check.positive_int("line", draft.line)  # a bound the database's integer holds (2**63 would not)
    sides = [side.value for side in DiffSide]
    if draft.side not in sides:
        raise InvalidValueError("side", draft.side, f"one of {', '.join(sides)}")
    if draft.side == DiffSide.OLD and draft.line is None:
        raise InvalidValueError("side", draft.side, "'old' only with a line (a removed line of the old file)")
    return CommentDraft(body, file, draft.line, DiffSide(draft.side))
