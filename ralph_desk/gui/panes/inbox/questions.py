"""The Questions tab: each open question of an agent as a card to answer."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.domain.records import Signal as SignalRecord
from ralph_desk.gui import fmt, theme
from ralph_desk.gui.widgets.card_list import Card, CardList
from ralph_desk.gui.widgets.common import SendingTextEdit, button, label, link
from ralph_desk.gui.widgets.empty_state import EmptyState
from ralph_desk.gui.widgets.flow import FlowLayout
from ralph_desk.gui.widgets.pill import Pill

STAR = "★"


@dataclass(frozen=True)
class QuestionItem:
    """An open question with what the window shows beside it."""

    ask: SignalRecord
    task_title: str
    task_status: TaskStatus | None
    doing: SignalRecord | None = None
    """The task's latest `partial` (what the agent did and what remains), if any."""


class QuestionCard(Card):
    """One question: its task, the question, what the agent was doing, options and an answer box."""

    sig_answer_requested = Signal(int, str)
    """Answer the question with this id with this text."""
    sig_open_task_requested = Signal(int)
    """Show the task with this id."""

    def __init__(self, item: QuestionItem, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.item = item
        self.status = Pill()
        self.task = link("")
        self.task.linkActivated.connect(lambda _: self.sig_open_task_requested.emit(self.item.ask.task_id))
        self.blocking = Pill()
        self.asked = label(name="muted")
        header = QHBoxLayout()
        header.setSpacing(8)
        header.addWidget(self.status)
        header.addWidget(self.task, 1)
        header.addWidget(self.blocking)
        header.addWidget(self.asked)
        self.question = label(wrap=True, selectable=True)
        font = QFont(self.question.font())
        font.setPointSizeF(font.pointSizeF() * 1.15)
        font.setBold(True)
        self.question.setFont(font)
        self.doing = label(wrap=True, name="muted", selectable=True)
        self.options = QWidget()
        self.options_layout = FlowLayout(self.options, spacing=8)
        self.answer = SendingTextEdit(
            "Type an answer (Ctrl+Enter sends it), or a note that goes with the option you click", lines=2
        )
        self.answer.sig_send_requested.connect(self._send)
        self.answer.textChanged.connect(self._update_send)
        self.send = button("Answer", "approve", "Send this answer (Ctrl+Enter)", primary=True)
        self.send.clicked.connect(self._send)
        answer_row = QHBoxLayout()
        answer_row.setSpacing(8)
        answer_row.addWidget(self.answer, 1)
        answer_row.addWidget(self.send, 0, Qt.AlignmentFlag.AlignBottom)
        self.session = label(name="muted", selectable=True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 12)
        layout.setSpacing(8)
        layout.addLayout(header)
        layout.addWidget(self.question)
        layout.addWidget(self.doing)
        layout.addWidget(self.options)
        layout.addLayout(answer_row)
        layout.addWidget(self.session)
        self.option_buttons: list[QPushButton] = []
        self.set_item(item)

    def set_item(self, item: QuestionItem) -> None:
        """Show `item` (a typed answer is kept)."""
        self.item = item
        ask = item.ask
        status = item.task_status
        self.status.set_pill(
            theme.status_label(status) if status else "task",
            theme.status_color(status) if status else theme.muted(),
        )
        self.task.setText(f'<a href="task:{ask.task_id}">#{ask.task_id}</a> {escape(item.task_title)}')
        self.task.setToolTip(f"Show task #{ask.task_id} in the Tasks pane")
        if ask.blocking:
            self.blocking.set_pill("blocking", theme.severity_color("blocking"))
            self.blocking.setToolTip("The task waits for this answer before it runs again")
        else:
            self.blocking.set_pill("not blocking", theme.muted())
            self.blocking.setToolTip("The agent went on; the answer reaches the task's next session")
        self.asked.setText(fmt.ago(ask.created))
        self.asked.setToolTip(f"Asked {fmt.full(ask.created)}")
        self.question.setText(ask.question or "")
        self._show_doing(item.doing)
        self._show_options(ask)
        # The question's own number, as the undo notice and the Answered tab name it (the task's is above).
        self.session.setText(
            f"Question #{ask.id}" + (f" · session {ask.session_id}" if ask.session_id else "")
        )
        self._update_send()

    def focus_input(self) -> None:
        """Put the cursor in the answer box."""
        self.answer.setFocus(Qt.FocusReason.OtherFocusReason)

    def _show_doing(self, doing: SignalRecord | None) -> None:
        if doing is None:
            self.doing.hide()
            return
        parts = [f"<b>What the agent was doing:</b> {escape(doing.summary or '')}"]
        if doing.remaining:
            parts.append(f"<b>Remaining:</b> {escape(doing.remaining)}")
        self.doing.setText("<br>".join(parts))
        self.doing.show()

    def _show_options(self, ask: SignalRecord) -> None:
        wanted = list(ask.options)
        if [b.property("option") for b in self.option_buttons] == wanted:
            return
        for old in self.option_buttons:
            self.options_layout.removeWidget(old)
            old.deleteLater()
        self.option_buttons = []
        for option in wanted:
            preferred = option == ask.preferred
            shown = f"{STAR} {option}" if preferred else option
            option_button = QPushButton(shown)
            option_button.setObjectName("option")
            theme.style(option_button, theme.OPTION_STYLE)
            option_button.setProperty("option", option)
            option_button.setProperty("preferred", preferred)
            tip = "Answer with this option, and the note typed below if any"
            option_button.setToolTip(f"{tip} (the agent's preferred one)" if preferred else tip)
            option_button.clicked.connect(lambda _=False, text=option: self._choose(text))
            self.options_layout.addWidget(option_button)
            self.option_buttons.append(option_button)
        self.options.setVisible(bool(wanted))
        # Buttons made after the answer box would follow it in Tab order; the options are above it.
        chain: list[QWidget] = [*self.option_buttons, self.answer, self.send]
        for before, after in itertools.pairwise(chain):
            QWidget.setTabOrder(before, after)

    def _update_send(self) -> None:
        self.send.setEnabled(bool(self.answer.toPlainText().strip()))

    def _send(self) -> None:
        text = self.answer.toPlainText().strip()
        if text:
            self._answer(text)

    def _choose(self, option: str) -> None:
        """Answer with an option; a note typed in the answer box goes with it, never lost."""
        note = self.answer.toPlainText().strip()
        self._answer(f"{option}\n\n{note}" if note else option)

    def _answer(self, text: str) -> None:
        self.sig_answer_requested.emit(self.item.ask.id, text)


class QuestionsView(CardList[QuestionItem, QuestionCard]):
    """Open questions, oldest first."""

    sig_answer_requested = Signal(int, str)
    """Answer the question with this id with this text."""
    sig_open_task_requested = Signal(int)
    """Show the task with this id."""

    def __init__(self, parent: QWidget | None = None) -> None:
        empty = EmptyState(
            "question",
            "No questions waiting",
            "When an agent needs a decision it calls <b>ask</b>; the question appears here with the "
            "agent's options. A blocking question holds its task until you answer.",
        )
        super().__init__(
            key=lambda item: item.ask.id,
            create=self._create_card,
            update=lambda card, item: card.set_item(item),
            empty=empty,
            parent=parent,
        )

    def show_items(self, items: list[QuestionItem]) -> None:
        """Show these questions (cards of questions still open are kept as they are)."""
        self.sync(items)

    def _create_card(self, item: QuestionItem) -> QuestionCard:
        card = QuestionCard(item)
        card.sig_answer_requested.connect(self.sig_answer_requested)
        card.sig_open_task_requested.connect(self.sig_open_task_requested)
        return card
