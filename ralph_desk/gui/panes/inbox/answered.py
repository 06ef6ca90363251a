"""The Answered tab: questions already answered, the latest first, with their answers (read only)."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from PySide6.QtCore import QUrl, Signal
from PySide6.QtWidgets import QTextBrowser, QVBoxLayout, QWidget

from ralph_desk.domain.records import Signal as SignalRecord
from ralph_desk.gui import fmt


@dataclass(frozen=True)
class AnsweredItem:
    """An answered question and the title of its task."""

    ask: SignalRecord
    task_title: str


def answered_html(items: list[AnsweredItem]) -> str:
    """The answered questions as rich text: task link, question, answer, when and by whom."""
    if not items:
        return "<p>No answered questions yet. Questions you answer stay listed here.</p>"
    parts = []
    for item in items:
        ask = item.ask
        when = fmt.ago(ask.answered_at) if ask.answered_at else ""
        answer = escape(ask.answer or "").replace("\n", "<br>")
        parts.append(
            f'<p><a href="task:{ask.task_id}">#{ask.task_id}</a> {escape(item.task_title)}'
            f" <span style='color:gray'>· answered {escape(when)} by {escape(fmt.maker(ask.decided_by))}"
            "</span><br>"
            f"<b>{escape(ask.question or '')}</b><br>{answer}</p>"
        )
    return "<hr>".join(parts)


class AnsweredView(QWidget):
    """A read-only list of answered questions; a task link asks to show that task."""

    sig_open_task_requested = Signal(int)
    """Show the task with this id."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.items: list[AnsweredItem] = []
        self.browser = QTextBrowser()
        self.browser.setOpenLinks(False)
        self.browser.anchorClicked.connect(self._open)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 6, 0, 0)
        layout.addWidget(self.browser)
        self.show_items([])

    def show_items(self, items: list[AnsweredItem]) -> None:
        """Show these answered questions (the scroll position is kept)."""
        self.items = items
        scroll = self.browser.verticalScrollBar().value()
        self.browser.setHtml(answered_html(items))
        self.browser.verticalScrollBar().setValue(scroll)

    def _open(self, url: QUrl) -> None:
        text = url.toString()
        if text.startswith("task:") and text[5:].isdigit():
            self.sig_open_task_requested.emit(int(text[5:]))
