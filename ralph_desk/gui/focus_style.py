"""The Fusion style with a focus ring that shows: two pixels in the scheme's accent colour."""

from __future__ import annotations

from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QProxyStyle, QStyle, QStyleFactory, QStyleOption, QWidget

from ralph_desk.gui import theme

RING_PX = 2.0
RADIUS = 4.0


class FocusRingStyle(QProxyStyle):
    """Fusion, whose own focus frame (a faint outline) is drawn as a clear ring instead."""

    def drawPrimitive(
        self,
        element: QStyle.PrimitiveElement,
        option: QStyleOption,
        painter: QPainter,
        widget: QWidget | None = None,
    ) -> None:
        """Draw the keyboard focus as a ring in the accent colour; everything else as Fusion does."""
        state = option.state
        keyboard = bool(state & QStyle.StateFlag.State_KeyboardFocusChange)  # shown once Tab was used
        if element is QStyle.PrimitiveElement.PE_FrameFocusRect:
            if keyboard:
                _ring(painter, option)
            return
        super().drawPrimitive(element, option, painter, widget)
        if (
            element is QStyle.PrimitiveElement.PE_PanelButtonCommand
            and keyboard
            and state & QStyle.StateFlag.State_HasFocus
        ):
            _ring(painter, option)


def _ring(painter: QPainter, option: QStyleOption) -> None:
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(QPen(QColor(theme.tones().accent), RING_PX))
    painter.setBrush(QColor(0, 0, 0, 0))
    half = RING_PX / 2
    painter.drawRoundedRect(QRectF(option.rect).adjusted(half, half, -half, -half), RADIUS, RADIUS)
    painter.restore()


def app_style() -> QStyle | None:
    """The window's style: Fusion with a clear focus ring (None where Fusion is missing)."""
    base = QStyleFactory.create("Fusion")
    return FocusRingStyle(base) if base is not None else None
