"""The Suggestions tab: what agents propose, each as a card to approve, edit, reject or acknowledge."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from ralph_desk.domain.enums import SuggestionKind, TaskOrigin
from ralph_desk.domain.records import Signal as SignalRecord
from ralph_desk.domain.records import TaskSummary
from ralph_desk.gui import fmt, icons, theme
from ralph_desk.gui.panes.inbox.dialogs import ReasonDialog
from ralph_desk.gui.widgets.card_list import Card, CardList
from ralph_desk.gui.widgets.common import button, label, link, style_label
from ralph_desk.gui.widgets.empty_state import EmptyState
from ralph_desk.gui.widgets.pill import Pill

ROBOT_SIZE = 28


@dataclass(frozen=True)
class SuggestionItem:
    """A pending suggestion, the task it was made on, and the draft task it became (if any)."""

    suggestion: SignalRecord
    source_title: str
    draft: TaskSummary | None = None

    @property
    def is_new_task(self) -> bool:
        """Whether it proposes a new task (approve / reject) rather than a change (acknowledge)."""
        return self.suggestion.kind == SuggestionKind.NEW_TASK.value


class SuggestionCard(Card):
    """One suggestion: robot, what, why, kind, feature, where it came from, and the actions."""

    sig_approve_requested = Signal(int)
    """Approve the new-task suggestion with this signal id."""
    sig_edit_requested = Signal(int)
    """Edit the suggested task of this signal id, then approve it."""
    sig_reject_requested = Signal(int, str)
    """Reject the suggestion with this signal id, for this reason."""
    sig_acknowledge_requested = Signal(int)
    """Mark the (non-task) suggestion with this signal id as seen."""
    sig_open_task_requested = Signal(int)
    """Show the task with this id."""

    def __init__(self, item: SuggestionItem, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.item = item
        self.robot = QLabel()
        self.robot.setToolTip("Suggested by an agent")
        self.what = label(wrap=True, selectable=True)
        font = QFont(self.what.font())
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.1)
        self.what.setFont(font)
        self.kind = Pill()
        self.feature = Pill()
        header = QHBoxLayout()
        header.setSpacing(10)
        header.addWidget(self.robot, 0, Qt.AlignmentFlag.AlignTop)
        header.addWidget(self.what, 1)
        header.addWidget(self.kind, 0, Qt.AlignmentFlag.AlignTop)
        header.addWidget(self.feature, 0, Qt.AlignmentFlag.AlignTop)
        self.why = label(wrap=True, selectable=True)
        self.source = link("")
        style_label(self.source, "muted")
        self.source.linkActivated.connect(
            lambda href: self.sig_open_task_requested.emit(int(href.split(":")[1]))
        )
        self.approve = button(
            "Approve", "approve", "Make the task pending: the loop may run it", primary=True
        )
        self.edit = button("Edit and approve…", "edit", "Change title, description, feature… then approve")
        self.reject_button = button("Reject…", "reject", "Skip the task; your reason is kept as a comment")
        self.acknowledge = button("Acknowledge", "acknowledge", "Mark as seen; nothing else changes")
        self.approve.clicked.connect(lambda: self.sig_approve_requested.emit(self.item.suggestion.id))
        self.edit.clicked.connect(lambda: self.sig_edit_requested.emit(self.item.suggestion.id))
        self.reject_button.clicked.connect(self._ask_reason)
        self.acknowledge.clicked.connect(lambda: self.sig_acknowledge_requested.emit(self.item.suggestion.id))
        actions = QHBoxLayout()
        actions.setSpacing(8)
        for widget in (self.approve, self.edit, self.reject_button, self.acknowledge):
            actions.addWidget(widget)
        actions.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 12)
        layout.setSpacing(8)
        layout.addLayout(header)
        layout.addWidget(self.why)
        layout.addWidget(self.source)
        layout.addLayout(actions)
        self.reason_dialog: ReasonDialog | None = None
        self.set_item(item)

    def set_item(self, item: SuggestionItem) -> None:
        """Show `item`."""
        self.item = item
        suggestion = item.suggestion
        agent = theme.origin_color(TaskOrigin.AGENT)
        self.robot.setPixmap(icons.pixmap("robot", ROBOT_SIZE, agent))
        self.what.setText(suggestion.what or "")
        self.kind.set_pill((suggestion.kind or "").replace("_", " "), agent)
        self.feature.set_pill(suggestion.feature or "", theme.accent())
        self.feature.setVisible(bool(suggestion.feature))
        self.feature.setToolTip("The feature the agent proposes it for")
        self.why.setText(f"<b>Why:</b> {escape(suggestion.why or '')}")
        self.source.setText(self._source_text(item))
        for widget in (self.approve, self.edit, self.reject_button):
            widget.setVisible(item.is_new_task)
        self.acknowledge.setVisible(not item.is_new_task)

    def focus_input(self) -> None:
        """Put the keyboard on the main action."""
        target = self.approve if self.item.is_new_task else self.acknowledge
        target.setFocus(Qt.FocusReason.OtherFocusReason)

    def _source_text(self, item: SuggestionItem) -> str:
        suggestion = item.suggestion
        task = suggestion.task_id
        parts = [f'From <a href="task:{task}">#{task}</a> {escape(item.source_title)}']
        if suggestion.session_id:
            parts.append(f"session {escape(suggestion.session_id)}")
        parts.append(fmt.ago(suggestion.created))
        if item.draft is not None:
            parts.append(f'draft task <a href="task:{item.draft.id}">#{item.draft.id}</a>')
        return " · ".join(parts)

    def _ask_reason(self) -> None:
        dialog = ReasonDialog(
            "Reject the suggested task",
            f"Why is “{fmt.one_line(self.item.suggestion.what, 80)}” not wanted?",
            self,
        )
        dialog.accepted.connect(
            lambda: self.sig_reject_requested.emit(self.item.suggestion.id, dialog.text())
        )
        self.reason_dialog = dialog
        dialog.open()


class SuggestionsView(CardList[SuggestionItem, SuggestionCard]):
    """Suggestions waiting for review, oldest first."""

    sig_approve_requested = Signal(int)
    """Approve the new-task suggestion with this signal id."""
    sig_edit_requested = Signal(int)
    """Edit the suggested task of this signal id, then approve it."""
    sig_reject_requested = Signal(int, str)
    """Reject the suggestion with this signal id, for this reason."""
    sig_acknowledge_requested = Signal(int)
    """Mark the suggestion with this signal id as seen."""
    sig_open_task_requested = Signal(int)
    """Show the task with this id."""

    def __init__(self, parent: QWidget | None = None) -> None:
        empty = EmptyState(
            "suggestion",
            "No suggestions to review",
            "Agents call <b>suggest</b> when they see work outside their task. A suggested task waits "
            "here as a draft with a robot icon; the loop never runs it until you approve it.",
        )
        super().__init__(
            key=lambda item: item.suggestion.id,
            create=self._create_card,
            update=lambda card, item: card.set_item(item),
            empty=empty,
            parent=parent,
        )

    def show_items(self, items: list[SuggestionItem]) -> None:
        """Show these suggestions."""
        self.sync(items)

    def _create_card(self, item: SuggestionItem) -> SuggestionCard:
        card = SuggestionCard(item)
        card.sig_approve_requested.connect(self.sig_approve_requested)
        card.sig_edit_requested.connect(self.sig_edit_requested)
        card.sig_reject_requested.connect(self.sig_reject_requested)
        card.sig_acknowledge_requested.connect(self.sig_acknowledge_requested)
        card.sig_open_task_requested.connect(self.sig_open_task_requested)
        return card
