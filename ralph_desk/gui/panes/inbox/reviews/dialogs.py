"""The Reviews tab's dialogs: send the task back with comments, discard its work, finish a review."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from ralph_desk.gui.dialogs.buttons import action_buttons
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
    """Discarding a task's work: its branch and worktree go (the work kept for a while); the task starts
    again, or is skipped. Enter cancels."""

    def __init__(self, task_id: int, title: str, base: str, days: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Discard the work")
        self.setMinimumWidth(DIALOG_WIDTH)
        self.again = QRadioButton(f"Start the task again from {base or 'the base branch'} (pending)")
        self.skip = QRadioButton("Skip the task")
        self.choice = QButtonGroup(self)
        self.choice.addButton(self.again)
        self.choice.addButton(self.skip)
        self.again.setChecked(True)
        buttons, self.ok = action_buttons(self, "Discard", enter_cancels=True)
        layout = QVBoxLayout(self)
        layout.addWidget(
            label(
                f"The branch and worktree of “{escape(title)}” are removed. What the agent did is kept for "
                f"{days} days: Undo, or <code>ralph-desk review restore {task_id}</code>, brings it back.",
                wrap=True,
            )
        )
        layout.addWidget(self.again)
        layout.addWidget(self.skip)
        layout.addWidget(buttons)

    def skipped(self) -> bool:
        """Whether the task is to be skipped (else it goes back to pending)."""
        return self.skip.isChecked()


class FinishReviewBox(QMessageBox):
    """Approve & merge with unsent comments: send them (request changes), merge and drop them, or Cancel
    (the default: Enter loses nothing)."""

    def __init__(self, task_id: int, count: int, parent: QWidget | None = None) -> None:
        plural = "s" if count != 1 else ""
        super().__init__(
            QMessageBox.Icon.Question,
            "Finish your review",
            f"<b>Task #{task_id} has {count} comment{plural} you have not sent.</b><br><br>Send them to its "
            "agent (the task goes back with your review), or merge it and discard them?",
            QMessageBox.StandardButton.Cancel,
            parent,
        )
        self.send_button = self.addButton("Send and request changes", QMessageBox.ButtonRole.AcceptRole)
        self.drop_button = self.addButton("Merge and discard them", QMessageBox.ButtonRole.DestructiveRole)
        self.setDefaultButton(QMessageBox.StandardButton.Cancel)
