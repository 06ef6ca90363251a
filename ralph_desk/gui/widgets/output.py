"""A command's output, read-only and monospaced, bounded in lines; it follows the end unless scrolled up."""

from __future__ import annotations

from PySide6.QtGui import QFontDatabase, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QWidget

MAX_LINES = 2_000
AT_END_SLACK = 4


class OutputView(QPlainTextEdit):
    """Output as a terminal shows it: text appended as it comes, at most `max_lines` kept."""

    def __init__(self, max_lines: int = MAX_LINES, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setUndoRedoEnabled(False)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setMaximumBlockCount(max_lines)
        self.max_lines = max_lines

    def show_text(self, text: str) -> None:
        """Show this text alone (its last `max_lines` lines), from its end."""
        self.setPlainText(_last_lines(text, self.max_lines))
        self.moveCursor(QTextCursor.MoveOperation.End)
        self.ensureCursorVisible()

    def append_text(self, text: str) -> None:
        """Add text where the output ends (it may end mid-line); follow it when the end was in sight."""
        if not text:
            return
        bar = self.verticalScrollBar()
        following = bar.value() >= bar.maximum() - AT_END_SLACK
        if text.count("\n") >= self.max_lines:  # lines that would be dropped at once are not laid out
            self.setPlainText(_last_lines(text, self.max_lines))
        else:
            cursor = QTextCursor(self.document())
            cursor.movePosition(QTextCursor.MoveOperation.End)
            cursor.insertText(text)
        if following:
            bar.setValue(bar.maximum())

    def text(self) -> str:
        """What the view shows."""
        return self.toPlainText()


def _last_lines(text: str, count: int) -> str:
    lines = text.split("\n")
    return "\n".join(lines[-count:])
