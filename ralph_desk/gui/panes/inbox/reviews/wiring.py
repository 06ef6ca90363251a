"""The Reviews tab's wiring: reads tasks in review and their diffs on the worker; carries out decisions."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import partial

from ralph_desk.domain.diffs import MAX_CONTEXT_LINES, FileDiff, parse_diff, unchanged_lines
from ralph_desk.domain.enums import DiffSide, TaskStatus, Verb
from ralph_desk.domain.listing import Listing
from ralph_desk.domain.records import Change
from ralph_desk.domain.reviews import ReviewComment, ReviewItem, ReviewPin, ReviewResult, where
from ralph_desk.gui.backend import (
    MERGE_TOPIC,  # an approval queued, merged or refused
    ChecksFailingError,
    MergeBusyError,
    ReviewMovedError,
    ReviewService,
    Services,
    UnsentCommentsError,
    is_refusal,
)
from ralph_desk.gui.backend import REVIEW_COMMENT_TOPIC as COMMENT_TOPIC
from ralph_desk.gui.pacer import ReadPacer
from ralph_desk.gui.panes.inbox.reviews import highlight
from ralph_desk.gui.panes.inbox.reviews.checks_wiring import CHECKS_TOPIC, ReviewChecks
from ralph_desk.gui.panes.inbox.reviews.diff_view import WholeLines
from ralph_desk.gui.panes.inbox.reviews.entry import ReviewEntry
from ralph_desk.gui.panes.inbox.reviews.rows import DiffLayout, LineComment, layout
from ralph_desk.gui.panes.inbox.reviews.view import ReviewsView
from ralph_desk.gui.undo import PendingActions
from ralph_desk.gui.worker import Worker

TASK_TOPICS = frozenset({"tasks"})  # a task's done signal comes with its move to in_review

WINDOW_WAIT_S = 5.0
READ_SPACING_MS = 500
"""How long the window's worker waits for the merge turn; then the approval waits queued for its holder."""
MERGE_QUEUED = (
    "Task #{task_id} is approved and queued: another merge is under way (another process or the loop), "
    "and it merges this task in its turn."
)

CountListener = Callable[[int], None]
Version = tuple[tuple[int, datetime, str | None], ...]


@dataclass(frozen=True)
class DiffRead:
    """A task's diff, read and parsed on the worker, with its comments."""

    task_id: int
    files: list[FileDiff]
    comments: list[LineComment]
    laid_out: DiffLayout
    tip: str | None = None
    """The commit a whole-task diff was read at (what approving it merges); None for one session's."""
    rules: tuple[str, ...] = ()
    """The paths under `.ralph/` the branch changes (flagged)."""
    pin: ReviewPin | None = None
    """The commits the diff was read between (of the whole task, or of the session)."""


def line_comment(comment: ReviewComment) -> LineComment:
    """A stored review comment as the diff view shows it."""
    return LineComment(
        comment.body,
        comment.file,
        comment.line,
        comment.author,
        comment.state.value,
        comment.side,
        comment.id,
        comment.pending,
    )


class ReviewsWiring:
    """Connects the Reviews tab to the review service; re-reads it when tasks or comments change."""

    topics = TASK_TOPICS | {COMMENT_TOPIC, MERGE_TOPIC, CHECKS_TOPIC}

    def __init__(
        self,
        view: ReviewsView,
        services: Services,
        worker: Worker,
        on_count: CountListener | None = None,
        pending: PendingActions | None = None,
    ) -> None:
        self.view = view
        self.services = services
        self.worker = worker
        self.on_count = on_count
        self.pending = pending
        """The window's Undo: a discard done is offered back for a few seconds (its work is kept longer)."""
        self.reads = ReadPacer(worker, self._start_read, READ_SPACING_MS)
        self._force = False
        """A read asked for must read every review again (and see whether the project is a git repository)."""
        self.version: Version | None = None
        """The tasks in review shown, each with its last change."""
        self.checks = ReviewChecks(view.detail.checks, services, worker)
        view.sig_diff_requested.connect(self.read_diff)
        view.sig_lines_requested.connect(self.read_lines)
        view.sig_comment_requested.connect(self.comment)
        view.sig_comment_edit_requested.connect(self.edit_comment)
        view.sig_comment_delete_requested.connect(self.delete_comment)
        view.sig_approve_requested.connect(self.approve)
        view.sig_changes_requested.connect(self.request_changes)
        view.sig_discard_requested.connect(self.discard)
        view.sig_batch_approve_requested.connect(self.approve_all)
        view.sig_batch_changes_requested.connect(self.request_changes_all)
        view.sig_make_repository_requested.connect(self.make_repository)

    # --- reading ------------------------------------------------------------------------------

    def refresh(self, force: bool = True) -> None:
        """Read the tasks in review on the worker (a change meanwhile reads again after).

        Unless `force`d, the reviews (git work for each task) are read only when the tasks in review
        or their last change differ from those shown.
        """
        self._force = self._force or force
        self.reads.request(now=force)

    @property
    def reading(self) -> bool:
        """Whether a read is under way or due."""
        return self.reads.waiting

    def _start_read(self) -> None:
        force, self._force = self._force, False
        known = None if force else self.version
        if force:
            self.worker.submit(
                "see whether the project is a git repository",
                self.services.workspaces.is_git,
                self.view.show_git,
            )
        self.worker.submit(
            "read the reviews", lambda: self._read(known), self.reads.then(self._show), self._read_failed
        )

    def on_changes(self, changes: list[Change]) -> None:
        """Tasks changed: read the list again; comments on the task shown changed: read them again."""
        topics = {change.topic for change in changes}
        if topics & (TASK_TOPICS | {MERGE_TOPIC}):
            self.refresh(force=False)
        self.checks.on_changes(changes)
        current = self.view.current
        if current is None or COMMENT_TOPIC not in topics:
            return
        touched = {int(i) for change in changes if change.topic == COMMENT_TOPIC for i in change.ids}
        if not touched or current.task_id in touched:
            self.read_comments(current.task_id)

    def _read(self, known: Version | None) -> tuple[Version, Listing[ReviewEntry]] | None:
        in_review = self.services.tasks.list(status=TaskStatus.IN_REVIEW)
        merges = self.services.reviews.merge_state
        version = tuple(sorted((task.id, task.updated_at, merges(task.id)) for task in in_review))
        if version == known:
            return None
        items = self.services.reviews.list()
        return version, Listing((self._entry(item) for item in items), items.errors)

    def _entry(self, item: ReviewItem) -> ReviewEntry:
        task = item.task
        signals = tuple(self.services.signals.for_task(task.id))
        done = [signal.created for signal in signals if signal.verb is Verb.DONE]
        return ReviewEntry(
            task.id,
            task.title,
            item.summary or "",
            item.branch or "",
            item.base or "",
            item.sessions,
            signals,
            task.feature,
            item.merge or "",
            item.pin.tip if item.pin is not None else "",
            max(done, default=task.updated_at),
        )

    def _read_failed(self) -> None:
        self.reads.finished()

    def _show(self, read: tuple[Version, Listing[ReviewEntry]] | None) -> None:
        if read is not None:
            self.version, entries = read
            self.worker.left_out("read the reviews", entries.errors)
            self.view.show_items(entries)
            current = self.view.current
            self.checks.show_task(current.task_id if current is not None else None)
            if self.on_count is not None:
                self.on_count(len(entries))

    def read_diff(self, task_id: int, session_id: str) -> None:
        """Read a task's diff (of one session, or of the whole task) with its comments, and show it."""
        split = self.view.detail.diff.is_split
        self.checks.show_task(task_id)
        self.worker.submit(
            f"read the diff of task #{task_id}",
            lambda: self._read_diff(task_id, session_id or None, split),
            lambda read: self.view.show_diff(
                read.task_id, read.files, read.comments, read.laid_out, read.tip, read.rules, read.pin
            ),
            lambda: self.view.show_failure("The diff could not be read."),
        )

    def read_lines(self, task_id: int, session_id: str) -> None:
        """Read the whole files of a task's diff shown (of one session, or of the whole task), for the
        unchanged lines it leaves out; read through the same path as the diff, so at the same commits."""
        self.worker.submit(
            f"read the changed files of task #{task_id}",
            lambda: self._read_lines(task_id, session_id or None),
            lambda read: self.view.show_lines(task_id, session_id, *read),
            lambda: self.view.lines_failed(task_id),
        )

    def _read_lines(self, task_id: int, session_id: str | None) -> tuple[ReviewPin | None, WholeLines]:
        read = self.services.reviews.diff(task_id, session_id, MAX_CONTEXT_LINES)
        whole = parse_diff(read.text)
        return read.pin, {(diff.old_path, diff.new_path): unchanged_lines(diff) for diff in whole}

    def _read_diff(self, task_id: int, session_id: str | None, split: bool) -> DiffRead:
        """Read, parse and lay out a diff off the GUI thread (for a big one that takes a while)."""
        reviews = self.services.reviews
        read = reviews.diff(task_id, session_id)
        files = parse_diff(read.text)
        for diff in files:
            highlight.lexer_for(diff.path)  # found before the first paint
        comments = [line_comment(comment) for comment in reviews.comments(task_id)]
        tip = read.pin.tip if read.pin is not None and session_id is None else None
        laid_out = layout(files, comments, split)
        return DiffRead(task_id, files, comments, laid_out, tip, read.rules_changed, read.pin)

    def read_comments(self, task_id: int) -> None:
        """Read a task's comments again and show them on its diff."""
        self.worker.submit(
            f"read the comments of task #{task_id}",
            lambda: [line_comment(comment) for comment in self.services.reviews.comments(task_id)],
            lambda comments: self.view.show_comments(task_id, comments),
        )

    # --- acting (on the worker; the change feed brings the result into the tab) ---------------

    def comment(self, task_id: int, file: str, line: int, text: str, side: str = DiffSide.NEW.value) -> None:
        """Keep a comment on a line of the task's diff (of the new file, or a removed line of the old)."""
        self.worker.submit(
            f"comment on {where(file, line, DiffSide(side))}",
            lambda: self.services.reviews.add_comment(task_id, text, file, line, side=side),
            lambda _: self.read_comments(task_id),
        )

    def edit_comment(self, task_id: int, comment_id: int, text: str) -> None:
        """Give the human's unsent comment new text."""
        self.worker.submit(
            f"edit comment #{comment_id}",
            lambda: self.services.reviews.edit_comment(comment_id, text),
            lambda _: self.read_comments(task_id),
        )

    def delete_comment(self, task_id: int, comment_id: int) -> None:
        """Delete the human's unsent comment."""
        self.worker.submit(
            f"delete comment #{comment_id}",
            lambda: self.services.reviews.delete_comment(comment_id),
            lambda _: self.read_comments(task_id),
        )

    def approve(self, task_id: int, commit: str, anyway: bool = False, drop_comments: bool = False) -> None:
        """Merge exactly `commit`, the tip of the diff shown, into the base (or send the task back when the
        merge would conflict); a branch that moved since is shown again with its new diff, nothing merged.
        Required checks that fail are merged only `anyway`, unsent comments are left behind only when
        `drop_comments` (else the person is asked).

        The worker waits for the merge turn only briefly: while another process merges, the approval
        stays queued (recorded first) and that process merges it in turn; the worker goes on to reads.
        """
        reviews = self.services.reviews
        self.worker.submit(
            f"approve and merge task #{task_id}",
            lambda: _approve_or_queue(reviews, task_id, commit or None, anyway, drop_comments),
            lambda result: self._decided(result, commit, anyway, drop_comments),
        )

    def approve_all(self, chosen: list[tuple[int, str]]) -> None:
        """Approve and merge several tasks, each at the commit the list read, one after the other; the
        outcome of each is said (one whose checks fail or whose branch moved stays in review)."""
        reviews = self.services.reviews

        def each(task_id: int, commit: str) -> Decided:
            return _approve_or_queue(reviews, task_id, commit or None)

        self.worker.submit(
            f"approve and merge {len(chosen)} tasks", lambda: _batch(chosen, each), self._batch_decided
        )

    def request_changes_all(self, task_ids: list[int], message: str) -> None:
        """Send several tasks back to pending, each with its own comments and this message."""
        reviews = self.services.reviews
        notes = [message] if message else []
        self.worker.submit(
            f"request changes on {len(task_ids)} tasks",
            lambda: _batch(
                [(task_id, "") for task_id in task_ids], lambda i, _: reviews.request_changes(i, notes)
            ),
            self._batch_decided,
        )

    def _batch_decided(self, outcomes: list[BatchOutcome]) -> None:
        lines = [f"#{task_id}: {_outcome_text(outcome)}" for task_id, outcome in outcomes]
        refused = [line for (_, outcome), line in zip(outcomes, lines, strict=True) if _refused(outcome)]
        summary = f"{len(outcomes) - len(refused)} of {len(outcomes)} done. " + "; ".join(lines)
        if refused:
            self.worker.fail(summary)
        else:
            self.worker.succeed(summary)

    def request_changes(self, task_id: int, message: str) -> None:
        """Send the task back to pending with its comments (and this message, when given)."""
        self.worker.submit(
            f"request changes on task #{task_id}",
            lambda: self.services.reviews.request_changes(task_id, [message] if message else []),
            self._decided,
        )

    def discard(self, task_id: int, skip: bool) -> None:
        """Drop the task's branch (its work kept for a while): the task starts again from the base, or is
        skipped; the window's Undo brings the work back."""
        self.worker.submit(
            f"discard task #{task_id}",
            lambda: self.services.reviews.discard(task_id, skip),
            self._discarded,
        )

    def _discarded(self, result: ReviewResult) -> None:
        if self.pending is None:
            self._decided(result)
            return
        # The discard is done already: nothing waits for the time to be up, and Undo restores the work kept.
        undo = partial(self.restore, result.task_id)
        self.pending.hold(f"Discarded the work of task #{result.task_id}", lambda: None, undo)

    def restore(self, task_id: int) -> None:
        """Take a discard back: the task's branch made again from its work kept, the task back in review."""
        self.worker.submit(
            f"restore the work of task #{task_id}",
            lambda: self.services.reviews.restore(task_id),
            self._decided,
        )

    def make_repository(self) -> None:
        """Make the plain project folder a git repository: from now on each task works on its own branch."""
        self.worker.submit(
            "make the project a git repository", self.services.workspaces.make_repository, self._made
        )

    def _made(self, branch: str) -> None:
        self.view.show_git(True)
        self.worker.succeed(
            f"The project is a git repository now, on branch {branch}: each task works on its own branch."
        )

    def _decided(self, result: Decided, commit: str = "", anyway: bool = False, drop: bool = False) -> None:
        if isinstance(result, UnsentCommentsError):
            self.view.ask_finish_review(result.task_id, commit, result.count, anyway)
        elif isinstance(result, ChecksFailingError):
            self.view.ask_merge_anyway(result.task_id, commit, result.failing, drop)
        elif isinstance(result, ReviewMovedError):
            self.view.show_moved(result.task_id)
            self.worker.fail(f"Task #{result.task_id} was not merged: the work changed since you opened it.")
        elif isinstance(result, int):
            self.worker.succeed(MERGE_QUEUED.format(task_id=result))
        elif result.conflicts:
            self.worker.fail(f"Task #{result.task_id} was not merged: {result.message}")
        else:
            self.worker.succeed(f"Task #{result.task_id}: {result.message} ({result.status}).")


Decided = ReviewResult | ReviewMovedError | ChecksFailingError | UnsentCommentsError | int


def _approve_or_queue(
    reviews: ReviewService, task_id: int, commit: str | None, anyway: bool = False, drop: bool = False
) -> Decided:
    """On the worker: approve and merge `commit`; the task's id when its approval waits queued behind another
    merge; the refusal when the branch moved since its diff was read (its new diff is to be shown), when it
    has unsent comments (the person is asked to send or drop them), or when its required checks fail (the
    person is asked whether to merge anyway)."""
    try:
        return reviews.approve(task_id, commit, WINDOW_WAIT_S, anyway=anyway, drop_comments=drop)
    except (ChecksFailingError, UnsentCommentsError) as asked:
        return asked
    except MergeBusyError:
        return task_id
    except ReviewMovedError as moved:
        if moved.tip is None:  # the branch is gone: nothing new to show
            raise
        return moved


BatchOutcome = tuple[int, Decided | Exception]


def _batch(chosen: list[tuple[int, str]], decide: Callable[[int, str], Decided]) -> list[BatchOutcome]:
    """On the worker: the same decision on each task in turn; a task refused does not stop the others."""
    outcomes: list[BatchOutcome] = []
    for task_id, commit in chosen:
        try:
            outcomes.append((task_id, decide(task_id, commit)))
        except Exception as error:
            if not is_refusal(error):
                raise
            outcomes.append((task_id, error))
    return outcomes


def _refused(outcome: Decided | Exception) -> bool:
    return isinstance(outcome, Exception) or (isinstance(outcome, ReviewResult) and bool(outcome.conflicts))


def _outcome_text(outcome: Decided | Exception) -> str:
    """What became of one task of a batch, in a few words."""
    if isinstance(outcome, ChecksFailingError):
        return f"not merged, its required checks fail ({outcome.failing}); it stays in review"
    if isinstance(outcome, ReviewMovedError):
        return "not merged, the work changed since the list was read; it stays in review"
    if isinstance(outcome, Exception):
        return f"refused: {outcome}"
    if isinstance(outcome, int):
        return "approved, queued behind another merge"
    return f"{outcome.message} ({outcome.status})" if outcome.message else outcome.status
