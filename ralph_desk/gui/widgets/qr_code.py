"""A QR code painted in Qt from segno's module matrix (no image files), dark on light whatever the theme."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

QUIET_ZONE = 4
"""Modules of light border a reader needs around the code."""
MODULE_PX = 5
DARK = QColor("#000000")
LIGHT = QColor("#ffffff")


class QrCode(QWidget):
    """Shows one QR code; `matrix` is segno's (rows of 0/1), empty when nothing is shown."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.matrix: tuple[bytearray, ...] = ()
        self.text = ""
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.setAccessibleName("Pairing QR code")

    def show_text(self, text: str) -> None:
        """Encode `text` (empty: show nothing)."""
        import segno  # loaded when a code is first shown, not with the window

        self.text = text
        self.matrix = tuple(segno.make(text).matrix) if text else ()
        self.updateGeometry()
        self.setFixedSize(self.sizeHint())
        self.update()

    def sizeHint(self) -> QSize:
        side = (len(self.matrix) + 2 * QUIET_ZONE) * MODULE_PX if self.matrix else 0
        return QSize(side, side)

    def module_rect(self, row: int, column: int) -> QRect:
        """Where module (row, column) is painted."""
        size = self.module_px()
        return QRect((column + QUIET_ZONE) * size, (row + QUIET_ZONE) * size, size, size)

    def module_px(self) -> int:
        """The side of one module in pixels at the widget's size."""
        count = len(self.matrix) + 2 * QUIET_ZONE
        return max(1, min(self.width(), self.height()) // count)

    def paintEvent(self, event: QPaintEvent) -> None:
        if not self.matrix:
            return
        painter = QPainter(self)
        size = self.module_px()
        side = (len(self.matrix) + 2 * QUIET_ZONE) * size
        painter.fillRect(QRect(0, 0, side, side), LIGHT)
        _paint_modules(painter, self.matrix, self)
        painter.end()


def _paint_modules(painter: QPainter, matrix: Sequence[bytearray], code: QrCode) -> None:
    painter.setPen(Qt.PenStyle.NoPen)
    for row, modules in enumerate(matrix):
        for column, dark in enumerate(modules):
            if dark:
                painter.fillRect(code.module_rect(row, column), DARK)
