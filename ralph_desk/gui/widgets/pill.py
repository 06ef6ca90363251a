"""Coloured labels ("pills") for states and severities, as widgets and as a table delegate."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPaintEvent
from PySide6.QtWidgets import QSizePolicy, QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from ralph_desk.gui import theme

COLOR_ROLE = Qt.ItemDataRole.UserRole + 10
"""The role under which a model gives the colour of a pill cell."""

PAD_X = 8
PAD_Y = 2


class Pill(QWidget):
    """A rounded label tinted with a colour, drawn like the pills in tables."""

    def __init__(self, text: str = "", color: QColor | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._text = text
        self._color = color or theme.muted()
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)

    def text(self) -> str:
        """The text shown."""
        return self._text

    def set_pill(self, text: str, color: QColor) -> None:
        """Change the text and colour."""
        self._text = text
        self._color = color
        self.updateGeometry()
        self.update()

    def sizeHint(self) -> QSize:
        """Room for the bold text and the padding."""
        font = QFont(self.font())
        font.setBold(True)
        metrics = QFontMetrics(font)
        return QSize(metrics.horizontalAdvance(self._text) + 2 * PAD_X + 4, metrics.height() + 2 * PAD_Y + 2)

    def paintEvent(self, event: QPaintEvent) -> None:
        """Draw the pill."""
        painter = QPainter(self)
        paint_pill(painter, self.rect(), self._text, self._color)
        painter.end()


def paint_pill(painter: QPainter, rect: QRect, text: str, color: QColor, on_selection: bool = False) -> None:
    """Draw a pill with `text` at the left of `rect`, vertically centred (lighter on a selected row)."""
    painter.save()
    font = painter.font()
    font.setBold(True)
    painter.setFont(font)
    metrics = painter.fontMetrics()
    shown = metrics.elidedText(text, Qt.TextElideMode.ElideRight, max(0, rect.width() - 2 * PAD_X))
    width = min(metrics.horizontalAdvance(shown) + 2 * PAD_X + 2, rect.width())
    height = min(metrics.height() + 2 * PAD_Y, rect.height())
    box = QRectF(rect.left(), rect.top() + (rect.height() - height) / 2, width, height)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor(255, 255, 255, 235) if on_selection else theme.pill_background(color))
    painter.drawRoundedRect(box, height / 2, height / 2)
    painter.setPen(color.darker(200) if on_selection and color.lightness() > 140 else color)
    painter.drawText(box, Qt.AlignmentFlag.AlignCenter, shown)
    painter.restore()


class PillDelegate(QStyledItemDelegate):
    """Paints a cell's text as a pill in the colour the model gives under `COLOR_ROLE`."""

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        """Draw the selection background, then the pill."""
        color: Any = index.data(COLOR_ROLE)
        text = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
        if not isinstance(color, QColor) or not text:
            super().paint(painter, option, index)
            return
        self.initStyleOption(option, index)
        option.text = ""
        style = option.widget.style() if option.widget is not None else None
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, option, painter, option.widget)
        rect = option.rect.adjusted(6, 3, -4, -3)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        paint_pill(painter, rect, text, color, on_selection=selected)

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        """Room for the pill's padding."""
        size = super().sizeHint(option, index)
        return QSize(size.width() + 2 * PAD_X + 6, size.height() + 2 * PAD_Y)
