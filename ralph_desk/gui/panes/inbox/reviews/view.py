"""The Reviews tab: tasks waiting in review; per task the agent's account, its sessions, the diff, actions."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QAbstractButton, QComboBox, QHBoxLayout, QVBoxLayout, QWidget

from ralph_desk.domain.branches import DISCARD_RETENTION
from ralph_desk.domain.diffs import FileDiff
from ralph_desk.domain.enums import ReviewCommentState
from ralph_desk.domain.records import Signal as SignalRecord
from ralph_desk.domain.reviews import ReviewPin
from ralph_desk.gui import fmt, theme
from ralph_desk.gui.dialogs.confirm import ConfirmBox, confirm
from ralph_desk.gui.panes.inbox.reviews.checks import ChecksStrip
from ralph_desk.gui.panes.inbox.reviews.dialogs import DiscardDialog, FinishReviewBox, RequestChangesDialog
from ralph_desk.gui.panes.inbox.reviews.diff_model import COMMENT_STATES
from ralph_desk.gui.panes.inbox.reviews.diff_view import DiffView, WholeLines
from ralph_desk.gui.panes.inbox.reviews.entry import ReviewEntry
from ralph_desk.gui.panes.inbox.reviews.review_list import ReviewList
from ralph_desk.gui.panes.inbox.reviews.rows import DiffLayout, LineComment
from ralph_desk.gui.widgets.common import button, label, link
from ralph_desk.gui.widgets.empty_state import EmptyState
from ralph_desk.gui.widgets.layout import side_by_side, stacked

SHOWN_SIGNALS = 8
KEPT_DAYS = DISCARD_RETENTION.days
WHOLE_TASK = ""


NOTHING_TO_REVIEW = (
    "When an agent calls <b>done</b>, its task waits here in review with the diff of its branch. "
    "Approve to merge it into the base, request changes with comments on lines, or discard it."
)
MOVED = (
    "<b>The work changed since you opened it; here is the new diff.</b> Nothing was merged: "
    "read it, then approve again to merge it."
)
NOT_READ = "The diff is still being read: approve once it is shown."
MERGE_ANYWAY = (
    "<b>Task #{task_id}'s required checks fail:</b> {failing}.<br><br>Merge it into the base anyway? "
    "Your choice is recorded on the task's review. To see why they fail, click a check above; to try "
    "again, <i>Run checks again</i>."
)
NOT_GIT = (
    "This project is not a git repository, so agents edit its folder directly and <b>done</b> is done "
    "at once. As a git repository, each task works on a branch of its own and waits here for review. "
    "Making it one runs <code>git init</code> and commits every file git does not ignore."
)


def _signal_text(signal: SignalRecord) -> str:
    """What a signal said, in a few words."""
    said = (
        signal.summary
        or signal.what
        or signal.text
        or signal.question
        or signal.reason
        or signal.detail
        or signal.remaining
        or ""
    )
    return fmt.one_line(said, 140)


def _note(comment: LineComment) -> str:
    """A comment on the whole task, with who wrote it and whether it went to the agent."""
    state = COMMENT_STATES.get(comment.state)
    said = f"<b>{escape(comment.author or 'comment')}:</b> {escape(fmt.one_line(comment.text, 200))}"
    return said + (f" <i>({escape(state)})</i>" if state else "")


class ReviewDetail(QWidget):
    """One task in review: what the agent said it did, its signals and sessions, the diff, the actions."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.entry: ReviewEntry | None = None
        self.title = link("")
        self.title.setObjectName("subheading")
        self.branch = label(name="muted", selectable=True)
        self.summary = label(wrap=True, selectable=True)
        self.signals = label(wrap=True, selectable=True)
        self.notes = label(wrap=True, selectable=True)
        self.notes.hide()
        self.merge = label(wrap=True, selectable=True)
        self.merge.hide()
        self.rules = label(wrap=True, selectable=True)
        self.rules.hide()
        self.moved = label(wrap=True, selectable=True)
        self.moved.hide()
        self.session = QComboBox()
        # Sized by its items whenever they change: sized once at its first show, it could be too narrow.
        self.session.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.session.setToolTip("The diff of the whole task against its base, or of one session's commit")
        self.approve = button(
            "Approve && merge",
            "merge",
            "Merge the task's branch into its base; the task is done",
            primary=True,
        )
        self.request = button("Request changes…", "comment", "Send the task back with your comments")
        self.discard = button("Discard…", "trash", "Remove the branch: start the task again, or skip it")
        self.checks = ChecksStrip()
        self.diff = DiffView()
        self.status = label(name="muted")
        self._build()

    def _build(self) -> None:
        heading = QHBoxLayout()
        heading.addWidget(self.title, 1)
        heading.addWidget(self.branch)
        actions = QHBoxLayout()
        actions.addWidget(label("Diff of"))
        actions.addWidget(self.session)
        actions.addWidget(self.status, 1)
        for widget in (self.approve, self.request, self.discard):
            actions.addWidget(widget)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addLayout(heading)
        layout.addWidget(self.summary)
        layout.addWidget(self.moved)
        layout.addWidget(self.rules)
        layout.addWidget(self.merge)
        layout.addWidget(self.signals)
        layout.addWidget(self.notes)
        layout.addWidget(self.checks)
        layout.addLayout(actions)
        layout.addWidget(self.diff, 1)

    def resizeEvent(self, event: QResizeEvent) -> None:
        """A check's output takes a share of the height: on a small screen the diff keeps its room."""
        self.checks.fit_output(event.size().height())
        super().resizeEvent(event)

    def show_entry(self, entry: ReviewEntry) -> None:
        """Show a task's account, signals and sessions (the diff comes separately)."""
        same_task = self.entry is not None and self.entry.task_id == entry.task_id
        self.entry = entry
        self.title.setText(
            f'<a href="task:{entry.task_id}"><b>#{entry.task_id}</b></a> {escape(entry.title)}'
        )
        self.branch.setText(f"{entry.branch} → {entry.base}" if entry.branch else "")
        self.summary.setText(
            f"<b>The agent:</b> {escape(entry.summary)}" if entry.summary else "<i>No summary given.</i>"
        )
        self.signals.setText(self._signals_html(entry.signals))
        self.merge.setText(f"<b>Merge:</b> {escape(entry.merge)}" if entry.merge else "")
        self.merge.setVisible(bool(entry.merge))
        self.diff.set_editable(not entry.merge)  # approved: the review is decided
        chosen = self.session.currentData() if same_task else WHOLE_TASK
        self.session.blockSignals(True)
        self.session.clear()
        self.session.addItem("Whole task", WHOLE_TASK)
        for number, session in enumerate(sorted(entry.sessions, key=lambda s: s.started_at), start=1):
            outcome = (session.outcome or "").replace("_", " ")
            self.session.addItem(f"Session {number} · {fmt.when(session.started_at)} · {outcome}", session.id)
        found = self.session.findData(chosen)
        self.session.setCurrentIndex(max(0, found))
        self.session.blockSignals(False)

    def show_rules(self, paths: Sequence[str]) -> None:
        """Flag the files of the project's rules (`.ralph/`) that the branch changes: approval is refused."""
        self.rules.setVisible(bool(paths))
        self.rules.setText(
            f"<b style='color:{theme.severity_color('warning').name()}'>"
            "⚠ This branch changes the project's rules (.ralph/):</b> "
            + escape(", ".join(paths))
            + ". A task branch may not change them: approving is refused until those changes are removed "
            "from the branch: request changes so that its agent restores them as they are on the base."
            if paths
            else ""
        )

    def show_notes(self, comments: Sequence[LineComment]) -> None:
        """Show the comments on the whole task (those on files and lines are in the diff)."""
        general = [comment for comment in comments if not comment.file]
        self.notes.setVisible(bool(general))
        self.notes.setText("<br>".join(_note(comment) for comment in general))

    def session_id(self) -> str | None:
        """The session whose diff is asked for (None: the whole task)."""
        data = self.session.currentData()
        return str(data) if data else None

    def _signals_html(self, signals: Sequence[SignalRecord]) -> str:
        if not signals:
            return ""
        latest = sorted(signals, key=lambda signal: signal.created, reverse=True)[:SHOWN_SIGNALS]
        items = []
        for signal in latest:
            color = theme.verb_color(signal.verb).name()
            items.append(
                f"<span style='color:{color}'><b>{escape(signal.verb.value)}</b></span> "
                f"{escape(_signal_text(signal))} <span style='color:{theme.muted().name()}'>"
                f"{escape(fmt.ago(signal.created))}</span>"
            )
        more = len(signals) - len(latest)
        tail = f"<br>… {more} earlier" if more > 0 else ""
        return "<br>".join(items) + tail


class ReviewsView(QWidget):
    """Tasks waiting in review (left) and the one chosen (right); the view only shows and asks."""

    sig_diff_requested = Signal(int, str)
    """Show the diff of this task: of one session (its id), or of the whole task (empty)."""
    sig_lines_requested = Signal(int, str)
    """Read the whole files of this task's diff: of one session (its id), or of the whole task (empty)."""
    sig_comment_requested = Signal(int, str, int, str, str)
    """Comment on this task's file, at this line, with this text, on this side ('new', or 'old': removed)."""
    sig_comment_edit_requested = Signal(int, int, str)
    """Give this task's unsent comment (by id) this text."""
    sig_comment_delete_requested = Signal(int, int)
    """Delete this task's unsent comment (by id)."""
    sig_approve_requested = Signal(int, str, bool, bool)
    """Merge into its base exactly this commit of this task (the tip of the diff shown; empty: no branch);
    although its required checks fail (True: the person said so); dropping its unsent comments (True)."""
    sig_changes_requested = Signal(int, str)
    """Send this task back to pending with its line comments and this message (may be empty)."""
    sig_discard_requested = Signal(int, bool)
    """Discard this task's branch; skip the task (True) or start it again from the base (False)."""
    sig_batch_approve_requested = Signal(list)
    """Approve and merge these tasks, each at the tip the list read: a list of (task id, commit)."""
    sig_batch_changes_requested = Signal(list, str)
    """Send these tasks (a list of ids) back to pending, each with its comments and this message."""
    sig_viewed_changed = Signal(int, list)
    """The files of this task marked viewed are these now (fingerprints of their changes)."""
    sig_make_repository_requested = Signal()
    """Make the plain project folder a git repository (asked from the empty tab)."""
    sig_open_task_requested = Signal(int)
    """Show the task with this id."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.list = ReviewList()
        self.model = self.list.model
        self.table = self.list.table
        self.detail = ReviewDetail()
        self.comments: list[LineComment] = []
        self.pin: str | None = None
        """The tip commit of the current task's whole diff last shown: what Approve & merge merges."""
        self.dialog: RequestChangesDialog | DiscardDialog | ConfirmBox | FinishReviewBox | None = None
        self.viewed_marks: Callable[[int], frozenset[str]] = lambda _task_id: frozenset()
        """Where a task's files marked viewed are remembered (the window's settings)."""
        self.empty = EmptyState(
            "merge",
            "Nothing to review",
            NOTHING_TO_REVIEW,
        )
        self.empty.button.setText("Make it a git repository")
        self.empty.button.setVisible(False)
        self.body = side_by_side(self.list, self.detail, (1, 3), [300, 900])
        self.stack = stacked(self.empty, self.body)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.stack)
        self._connect()

    def _connect(self) -> None:
        self.table.selectionModel().currentRowChanged.connect(
            lambda current, _: self._choose(current.row()) if current.isValid() else None
        )
        detail = self.detail
        detail.title.linkActivated.connect(
            lambda href: self.sig_open_task_requested.emit(int(href.split(":")[1]))
        )
        detail.session.currentIndexChanged.connect(lambda _: self._ask_diff())
        detail.diff.sig_comment_requested.connect(self._comment)
        detail.diff.sig_edit_requested.connect(self._edit)
        detail.diff.sig_delete_requested.connect(self._delete)
        detail.approve.clicked.connect(self._approve)
        detail.request.clicked.connect(self._ask_changes)
        detail.discard.clicked.connect(self._ask_discard)
        self.empty.sig_action_requested.connect(self.sig_make_repository_requested)
        detail.diff.sig_lines_requested.connect(self._ask_lines)
        detail.diff.sig_viewed_changed.connect(
            lambda marks: self.sig_viewed_changed.emit(self.current.task_id, marks) if self.current else None
        )
        self.list.sig_batch_approve_requested.connect(self._ask_batch_approve)
        self.list.sig_batch_changes_requested.connect(self._ask_batch_changes)

    # --- showing ------------------------------------------------------------------------------

    @property
    def current(self) -> ReviewEntry | None:
        """The task shown on the right."""
        return self.detail.entry

    def show_git(self, is_git: bool) -> None:
        """Say whether work can be reviewed here; a plain folder is offered to become a git repository."""
        if is_git:
            self.empty.title.setText("Nothing to review")
            self.empty.text.setText(NOTHING_TO_REVIEW)
        else:
            self.empty.title.setText("Not a git repository")
            self.empty.text.setText(NOT_GIT)
        self.empty.button.setVisible(not is_git)

    def show_items(self, entries: Sequence[ReviewEntry]) -> None:
        """Show these tasks in review; the chosen one stays chosen while it is there, else the first is."""
        self.list.set_entries(entries)
        self.stack.setCurrentWidget(self.body if entries else self.empty)
        if not entries:
            self.detail.entry = None
            return
        current = self.current
        row = self.model.row_of(current.task_id) if current is not None else None
        if row is not None:
            self.detail.show_entry(self.model.record(row))
            return
        self.detail.entry = None
        self.table.selectRow(0)
        if self.detail.entry is None:  # the first row was current already: no change was signalled
            self._choose(0)

    def select_task(self, task_id: int) -> bool:
        """Choose a task by id; False when it is not in review."""
        row = self.model.row_of(task_id)
        if row is None:
            return False
        self.table.selectRow(row)
        return True

    def _choose(self, row: int) -> None:
        """Show a task's account and ask for its diff (of the whole task)."""
        self.pin = None
        self.detail.moved.hide()
        self.detail.show_rules(())
        self.detail.show_entry(self.model.record(row))
        self._ask_diff()

    def show_diff(
        self,
        task_id: int,
        files: Sequence[FileDiff],
        comments: Sequence[LineComment],
        laid_out: DiffLayout | None = None,
        tip: str | None = None,
        rules: Sequence[str] = (),
        pin: ReviewPin | None = None,
    ) -> None:
        """Show a task's diff with its comments (ignored when another task is shown meanwhile).

        `tip` is the commit a whole-task diff was read at: approving merges exactly it. `rules` are the paths
        under `.ralph/` the branch changes, flagged; `pin` the commits the diff was read between.
        """
        if self.current is None or self.current.task_id != task_id:
            return
        if tip is not None:
            self.pin = tip
        self.detail.show_rules(rules)
        self.comments = list(comments)
        self.detail.status.setText("")
        self.detail.show_notes(comments)
        self.detail.diff.viewed = set(self.viewed_marks(task_id))
        self.detail.diff.show_files(files, comments, laid_out, pin)

    def show_lines(self, task_id: int, session_id: str, pin: ReviewPin | None, whole: WholeLines) -> None:
        """Give the diff shown its files read whole, for the unchanged lines it leaves out (ignored when
        another diff is shown meanwhile); read at other commits, the work moved: its new diff is read."""
        if self.current is None or self.current.task_id != task_id:
            return
        if (self.detail.session_id() or WHOLE_TASK) != session_id:
            self.detail.diff.lines_failed()
            return
        if not self.detail.diff.show_lines(pin, whole):
            self.show_moved(task_id)

    def lines_failed(self, task_id: int) -> None:
        """Reading the whole files failed: say so, the diff stays as it is."""
        if self.current is not None and self.current.task_id == task_id:
            self.detail.diff.lines_failed()
            self.detail.status.setText("The unchanged lines could not be read.")

    def show_comments(self, task_id: int, comments: Sequence[LineComment]) -> None:
        """Show a task's comments again (one was added)."""
        if self.current is None or self.current.task_id != task_id:
            return
        self.comments = list(comments)
        self.detail.show_notes(comments)
        self.detail.diff.set_comments(comments)

    def show_moved(self, task_id: int) -> None:
        """Say the task's branch moved since its diff was shown, and read its whole diff again."""
        if self.current is None or self.current.task_id != task_id:
            return
        self.pin = None
        self.detail.moved.setText(MOVED)
        self.detail.moved.show()
        self.detail.session.blockSignals(True)
        self.detail.session.setCurrentIndex(max(0, self.detail.session.findData(WHOLE_TASK)))
        self.detail.session.blockSignals(False)
        self._ask_diff()

    def ask_merge_anyway(self, task_id: int, commit: str, failing: str, drop_comments: bool = False) -> None:
        """The task's required checks fail: ask whether to merge anyway (Cancel is the default)."""
        if self.current is None or self.current.task_id != task_id:
            return
        self.dialog = confirm(
            self,
            "Merge anyway?",
            MERGE_ANYWAY.format(task_id=task_id, failing=escape(failing)),
            "Merge anyway",
            lambda: self.sig_approve_requested.emit(task_id, commit, True, drop_comments),
        )

    def ask_finish_review(self, task_id: int, commit: str, count: int, anyway: bool = False) -> None:
        """The task has unsent comments: send them and request changes, merge and drop them, or cancel."""
        if self.current is None or self.current.task_id != task_id:
            return
        box = FinishReviewBox(task_id, count, self)

        def chosen(clicked: QAbstractButton) -> None:
            if clicked is box.send_button:
                self.sig_changes_requested.emit(task_id, "")
            elif clicked is box.drop_button:
                self.sig_approve_requested.emit(task_id, commit, anyway, True)

        box.buttonClicked.connect(chosen)
        self.dialog = box
        box.open()

    def show_failure(self, text: str) -> None:
        """Say that reading the diff failed."""
        self.detail.status.setText(text)

    # --- asking -------------------------------------------------------------------------------

    def _ask_diff(self) -> None:
        if self.current is not None:
            self.detail.status.setText("Reading the diff…")
            self.sig_diff_requested.emit(self.current.task_id, self.detail.session_id() or WHOLE_TASK)

    def _ask_lines(self) -> None:
        if self.current is not None:
            self.sig_lines_requested.emit(self.current.task_id, self.detail.session_id() or WHOLE_TASK)

    def _comment(self, file: str, line: int, text: str, side: str) -> None:
        if self.current is not None:
            self.sig_comment_requested.emit(self.current.task_id, file, line, text, side)

    def _edit(self, comment_id: int, text: str) -> None:
        if self.current is not None:
            self.sig_comment_edit_requested.emit(self.current.task_id, comment_id, text)

    def _delete(self, comment_id: int) -> None:
        if self.current is not None:
            self.sig_comment_delete_requested.emit(self.current.task_id, comment_id)

    def _approve(self) -> None:
        entry = self.current
        if entry is None:
            return
        if entry.branch and self.pin is None:
            self.detail.status.setText(NOT_READ)
            return
        self.detail.moved.hide()
        self.sig_approve_requested.emit(entry.task_id, self.pin or "", False, False)

    def _ask_changes(self) -> None:
        entry = self.current
        if entry is None:
            return
        unsent = [comment for comment in self.comments if comment.state == ReviewCommentState.OPEN]
        dialog = RequestChangesDialog(entry.title, unsent, self)
        dialog.accepted.connect(lambda: self.sig_changes_requested.emit(entry.task_id, dialog.text()))
        self.dialog = dialog
        dialog.open()

    def _ask_discard(self) -> None:
        entry = self.current
        if entry is None:
            return
        dialog = DiscardDialog(entry.task_id, entry.title, entry.base, KEPT_DAYS, self)
        dialog.accepted.connect(lambda: self.sig_discard_requested.emit(entry.task_id, dialog.skipped()))
        self.dialog = dialog
        dialog.open()

    def _ask_batch_approve(self) -> None:
        chosen = self.list.chosen()
        if not chosen:
            return
        listing = "<br>".join(f"#{entry.task_id} {escape(entry.title)}" for entry in chosen)
        self.dialog = confirm(
            self,
            "Approve and merge?",
            f"Merge these {len(chosen)} tasks into their bases, each as the list shows it?<br><br>{listing}"
            "<br><br>A task whose checks fail or whose work changed since is left in review, and said.",
            f"Approve && merge {len(chosen)}",
            lambda: self.sig_batch_approve_requested.emit([(entry.task_id, entry.tip) for entry in chosen]),
        )

    def _ask_batch_changes(self) -> None:
        chosen = self.list.chosen()
        if not chosen:
            return
        numbers = ", ".join(f"#{entry.task_id}" for entry in chosen)
        dialog = RequestChangesDialog(f"{len(chosen)} tasks ({numbers})", [], self)
        ids = [entry.task_id for entry in chosen]
        dialog.accepted.connect(lambda: self.sig_batch_changes_requested.emit(ids, dialog.text()))
        self.dialog = dialog
        dialog.open()

    def step(self, delta: int) -> None:
        """Choose the task `delta` rows on (F8, Shift+F8)."""
        self.list.step(delta)

    def focus_input(self) -> None:
        """Put the keyboard on the list of tasks."""
        self.table.setFocus(Qt.FocusReason.OtherFocusReason)
