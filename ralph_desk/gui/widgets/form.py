"""Building blocks of the record editors' forms: text boxes, rows of two fields, line lists."""

from __future__ import annotations

from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QPlainTextEdit, QWidget

from ralph_desk.gui.widgets.common import label


def text_box(height: int, placeholder: str = "") -> QPlainTextEdit:
    """A fixed-height plain text box where Tab moves focus."""
    box = QPlainTextEdit()
    box.setTabChangesFocus(True)
    box.setFixedHeight(height)
    box.setPlaceholderText(placeholder)
    return box


def editor_form() -> QFormLayout:
    """A form spaced as the record editors space theirs."""
    form = QFormLayout()
    form.setHorizontalSpacing(14)
    form.setVerticalSpacing(8)
    return form


def field_pair(
    first: QWidget, caption: str, second: QWidget, stretch: tuple[int, int] = (1, 0)
) -> QHBoxLayout:
    """Two fields on one form row, the second with its own caption."""
    row = QHBoxLayout()
    row.setSpacing(10)
    row.addWidget(first, stretch[0])
    row.addWidget(label(caption))
    row.addWidget(second, stretch[1])
    return row


def lines(text: str) -> list[str]:
    """The non-blank lines of a text, stripped."""
    return [line.strip() for line in text.splitlines() if line.strip()]


def cleaned(text: str) -> str | None:
    """The text stripped, or None when that leaves nothing."""
    return text.strip() or None
