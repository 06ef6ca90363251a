"""A framed box with rounded corners, painted in the current scheme's card colours."""

from __future__ import annotations

from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QFrame, QWidget

from ralph_desk.gui import theme

RADIUS = 8.0


class CardFrame(QFrame):
    """A box that sets its contents apart from the window background."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("card")
        self.highlighted = False

    def set_highlighted(self, highlighted: bool) -> None:
        """Draw the border in the accent colour (the current card)."""
        self.highlighted = highlighted
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        """Fill and outline the rounded box."""
        tones = theme.tones()
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        border = QColor(tones.accent) if self.highlighted else QColor(tones.border)
        painter.setPen(QPen(border, 1.0))
        painter.setBrush(QColor(tones.card))
        painter.drawRoundedRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5), RADIUS, RADIUS)
        painter.end()
