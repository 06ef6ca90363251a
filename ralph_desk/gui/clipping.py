"""Find text the window cuts off: labels, buttons, combo boxes and tab bars narrower than their text."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractButton, QAbstractItemView, QComboBox, QLabel, QTabBar, QWidget

from ralph_desk.gui.widgets.common import combo_width

SLACK_PX = 1


@dataclass(frozen=True)
class Clipped:
    """A widget whose text does not fit: what it says, the width it has and the width it needs."""

    kind: str
    text: str
    width: int
    needed: int
    path: str

    def __str__(self) -> str:
        return f"{self.kind} {self.text!r} at {self.path}: {self.width} px of {self.needed}"


def _path(widget: QWidget, top: QWidget) -> str:
    names = []
    current: QWidget | None = widget
    while current is not None and current is not top:
        names.append(current.objectName() or type(current).__name__)
        current = current.parentWidget()
    return "/".join(reversed(names))


def _needed(widget: QWidget) -> int | None:
    """The width the widget's text needs, or None when it wraps or shows no text."""
    if isinstance(widget, QLabel):
        if widget.wordWrap() or not widget.text() or (widget.pixmap() is not None and not widget.text()):
            return None
        return widget.minimumSizeHint().width()
    if isinstance(widget, QAbstractButton) and widget.text():
        return widget.minimumSizeHint().width()
    if isinstance(widget, QComboBox) and not widget.isEditable() and widget.currentText():
        return combo_width(widget)  # the choice shown, whole
    if isinstance(widget, QTabBar) and widget.count():
        return widget.sizeHint().width()  # narrower: the tabs are elided or scrolled
    return None


def _text(widget: QWidget) -> str:
    if isinstance(widget, QLabel | QAbstractButton):
        return widget.text()
    if isinstance(widget, QComboBox):
        return widget.currentText()
    if isinstance(widget, QTabBar):
        return " | ".join(widget.tabText(index) for index in range(widget.count()))
    return ""


def clipped_texts(top: QWidget) -> list[Clipped]:
    """Every visible label, button, combo box or tab bar below `top` that is narrower than its text."""
    found = []
    for widget in top.findChildren(QWidget):
        if not widget.isVisibleTo(top) or widget.width() <= 0:
            continue
        needed = _needed(widget)
        if needed is not None and widget.width() + SLACK_PX < needed:
            kind = type(widget).__name__
            found.append(Clipped(kind, _text(widget), widget.width(), needed, _path(widget, top)))
    return found


CELL_PADDING_PX = 8
"""What a cell's frame and margins take from its width (Fusion: 3 px a side, and a little slack)."""


def clipped_cells(view: QAbstractItemView, column: int = 0) -> list[Clipped]:
    """Every row of `view` whose text in `column` does not fit its cell: wrapped when the view wraps, else
    on one line."""
    model = view.model()
    metrics = view.fontMetrics()
    wraps = bool(getattr(view, "wordWrap", lambda: False)())
    found = []
    for row in range(model.rowCount()):
        index = model.index(row, column)
        text = str(model.data(index) or "")
        rect = view.visualRect(index)
        width = rect.width() - CELL_PADDING_PX
        if wraps:
            needed = metrics.boundingRect(0, 0, width, 10_000, Qt.TextFlag.TextWordWrap, text)
            fits = needed.height() <= rect.height() and needed.width() <= width
        else:
            needed = metrics.boundingRect(0, 0, 10_000, 10_000, 0, text)
            fits = needed.width() <= width and needed.height() <= rect.height()
        if not fits:
            found.append(
                Clipped("cell", text, rect.width(), needed.width(), f"row {row}: {rect.height()} px high")
            )
    return found
