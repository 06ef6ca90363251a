"""Find text the window cuts off: labels, buttons, combo boxes and tab bars narrower than their text."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtWidgets import QAbstractButton, QComboBox, QLabel, QTabBar, QWidget

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
