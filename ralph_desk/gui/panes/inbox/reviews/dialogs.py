"""The Reviews tab's dialogs: send the task back with comments, discard its work."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from ralph_desk.gui.panes.inbox.reviews.rows import LineComment
from ralph_desk.gui.widgets.common import label

DIALOG_WIDTH = 520
SHOWN_COMMENTS = 12


class RequestChangesDialog(QDialog):
    """What goes back to the agent: the line comments, and a message (needed when there are none)."""

    def __init__(self, title: str, comments: Sequence[LineComment], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.comments = list(comments)
        self.setWindowTitle("Request changes")
        self.setMinimumWidth(DIALOG_WIDTH)
        self.message = QPlainTextEdit()
        self.message.setPlaceholderText("What should the agent change? (optional with line comments)")
        self.message.setFixedHeight(96)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.ok: QPushButton = buttons.addButton("Request changes", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.message.textChanged.connect(self._enable)
        layout = QVBoxLayout(self)
        layout.addWidget(
            label(
                f"“{escape(title)}” goes back to pending; its next prompt opens with your review.", wrap=True
            )
        )
        layout.addWidget(label(self._listing(), wrap=True))
        layout.addWidget(self.message)
        layout.addWidget(buttons)
        self._enable()

    def _listing(self) -> str:
        if not self.comments:
            return "No line comments: write what to change."
        shown = [
            f"<li><b>{escape(comment.place or 'general')}</b> {escape(comment.text)}</li>"
            for comment in self.comments[:SHOWN_COMMENTS]
        ]
        more = len(self.comments) - SHOWN_COMMENTS
        extra = f"<li>… and {more} more</li>" if more > 0 else ""
        count = len(self.comments)
        return f"With {count} comment{'s' if count != 1 else ''}:<ul>{''.join(shown)}{extra}</ul>"

    def _enable(self) -> None:
        self.ok.setEnabled(bool(self.comments) or bool(self.text()))

    def text(self) -> str:
        """The message typed."""
        return self.message.toPlainText().strip()


class DiscardDialog(QDialog):
    """Discarding a task's work: its branch and worktree go; the task starts again, or is skipped."""

    def __init__(self, title: str, base: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Discard the work")
        self.setMinimumWidth(DIALOG_WIDTH)
        self.again = QRadioButton(f"Start the task again from {base or 'the base branch'} (pending)")
        self.skip = QRadioButton("Skip the task")
        self.choice = QButtonGroup(self)
        self.choice.addButton(self.again)
        self.choice.addButton(self.skip)
        self.again.setChecked(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.ok: QPushButton = buttons.addButton("Discard", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(
            label(
                f"The branch and worktree of “{escape(title)}” are removed; what the agent did is lost.",
                wrap=True,
            )
        )
        layout.addWidget(self.again)
        layout.addWidget(self.skip)
        layout.addWidget(buttons)

    def skipped(self) -> bool:
        """Whether the task is to be skipped (else it goes back to pending)."""
        return self.skip.isChecked()
