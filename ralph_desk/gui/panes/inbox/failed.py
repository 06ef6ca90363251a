"""The Failed tab: each task the loop gave up on, why, and what to do — retry with a note, edit, skip."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QVBoxLayout, QWidget

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.gui import fmt, theme
from ralph_desk.gui.backend import FailedTask
from ralph_desk.gui.widgets.card_list import Card, CardList
from ralph_desk.gui.widgets.common import SendingTextEdit, button, label, link
from ralph_desk.gui.widgets.empty_state import EmptyState
from ralph_desk.gui.widgets.pill import Pill


class FailedCard(Card):
    """One failed task: the reason, a note for the next try, and Retry / Edit / Skip."""

    sig_retry_requested = Signal(int, str)
    """Queue the task with this id again, with this note for its agent."""
    sig_skip_requested = Signal(int)
    """Skip the task with this id."""
    sig_open_task_requested = Signal(int)
    """Show the task with this id (to edit it)."""
    sig_open_transcript_requested = Signal(str)
    """Show this session transcript."""

    def __init__(self, item: FailedTask, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.item = item
        self.status = Pill()
        self.status.set_pill(theme.status_label(TaskStatus.FAILED), theme.status_color(TaskStatus.FAILED))
        self.task = link("")
        self.task.linkActivated.connect(self._on_link)
        self.when = label(name="muted")
        header = QHBoxLayout()
        header.setSpacing(8)
        header.addWidget(self.status)
        header.addWidget(self.task, 1)
        header.addWidget(self.when)
        self.reason = label(wrap=True, selectable=True)
        self.note = SendingTextEdit("A note for the next try (optional) — Ctrl+Enter retries", lines=2)
        self.note.sig_send_requested.connect(self._retry)
        self.retry = button(
            "Retry", "refresh", "Queue the task again with this note (Ctrl+Enter)", primary=True
        )
        self.retry.clicked.connect(self._retry)
        self.edit = button("Edit…", "edit", "Open the task in the Tasks pane to change it")
        self.edit.clicked.connect(lambda: self.sig_open_task_requested.emit(self.item.task.id))
        self.skip = button("Skip", "reject", "Give up on this task; tasks that depend on it keep waiting")
        self.skip.clicked.connect(lambda: self.sig_skip_requested.emit(self.item.task.id))
        actions = QVBoxLayout()
        actions.setSpacing(6)
        for widget in (self.retry, self.edit, self.skip):
            actions.addWidget(widget)
        actions.addStretch(1)
        row = QHBoxLayout()
        row.setSpacing(8)
        row.addWidget(self.note, 1)
        row.addLayout(actions)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 12)
        layout.setSpacing(8)
        layout.addLayout(header)
        layout.addWidget(self.reason)
        layout.addLayout(row)
        self.set_item(item)

    def set_item(self, item: FailedTask) -> None:
        """Show `item` (a typed note is kept)."""
        self.item = item
        task, session = item.task, item.session
        transcript = (
            f' · <a href="transcript:{escape(session.transcript_path)}">last session’s transcript</a>'
            if session is not None and session.transcript_path
            else ""
        )
        self.task.setText(f'<a href="task:{task.id}">#{task.id}</a> {escape(task.title)}{transcript}')
        self.task.setToolTip(f"Show task #{task.id} in the Tasks pane")
        self.when.setText(fmt.ago(task.updated_at))
        self.when.setToolTip(f"Failed {fmt.full(task.updated_at)}")
        self.reason.setText(item.reason)

    def focus_input(self) -> None:
        """Put the cursor in the note box."""
        self.note.setFocus(Qt.FocusReason.OtherFocusReason)

    def _on_link(self, href: str) -> None:
        kind, _, value = href.partition(":")
        if kind == "transcript":
            self.sig_open_transcript_requested.emit(value)
        else:
            self.sig_open_task_requested.emit(self.item.task.id)

    def _retry(self) -> None:
        self.sig_retry_requested.emit(self.item.task.id, self.note.toPlainText().strip())


class FailedView(CardList[FailedTask, FailedCard]):
    """Failed tasks, by id."""

    sig_retry_requested = Signal(int, str)
    """Queue the task with this id again, with this note."""
    sig_skip_requested = Signal(int)
    """Skip the task with this id."""
    sig_open_task_requested = Signal(int)
    """Show the task with this id."""
    sig_open_transcript_requested = Signal(str)
    """Show this session transcript."""

    def __init__(self, parent: QWidget | None = None) -> None:
        empty = EmptyState(
            "error",
            "No failed tasks",
            "A task fails when its sessions stay stuck (no closing verb, or nothing changed) as often as "
            "the stuck threshold allows. It appears here with the reason: retry it with a note, edit it "
            "or skip it.",
        )
        super().__init__(
            key=lambda item: item.task.id,
            create=self._create_card,
            update=lambda card, item: card.set_item(item),
            empty=empty,
            parent=parent,
        )

    def show_items(self, items: list[FailedTask]) -> None:
        """Show these failed tasks (cards still shown keep their typed notes)."""
        self.sync(items)

    def _create_card(self, item: FailedTask) -> FailedCard:
        card = FailedCard(item)
        card.sig_retry_requested.connect(self.sig_retry_requested)
        card.sig_skip_requested.connect(self.sig_skip_requested)
        card.sig_open_task_requested.connect(self.sig_open_task_requested)
        card.sig_open_transcript_requested.connect(self.sig_open_transcript_requested)
        return card
