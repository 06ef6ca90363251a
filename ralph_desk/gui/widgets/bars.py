"""A painted horizontal bar split into coloured segments (tasks per status)."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QHelpEvent, QPainter, QPainterPath, QPaintEvent
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from ralph_desk.gui import theme

BAR_HEIGHT = 14


@dataclass(frozen=True)
class Segment:
    """One part of a bar: what it counts, how many, in which colour."""

    label: str
    count: int
    color: QColor


class StackedBar(QWidget):
    """Segments side by side, each as wide as its share of the total; hover shows a segment's count."""

    def __init__(self, height: int = BAR_HEIGHT, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.segments: list[Segment] = []
        self._height = height
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMouseTracking(True)

    def set_segments(self, segments: list[Segment]) -> None:
        """Show these segments (zero counts take no room)."""
        self.segments = [segment for segment in segments if segment.count > 0]
        total = self.total
        self.setToolTip("\n".join(f"{s.label}: {s.count}" for s in self.segments) if total else "nothing yet")
        self.update()

    @property
    def total(self) -> int:
        """The sum of the counts."""
        return sum(segment.count for segment in self.segments)

    def sizeHint(self) -> QSize:
        """A thin bar."""
        return QSize(240, self._height)

    def minimumSizeHint(self) -> QSize:
        """As thin as asked, at least a little wide."""
        return QSize(60, self._height)

    def _rects(self) -> list[tuple[Segment, QRectF]]:
        total = self.total
        if not total:
            return []
        width = float(self.width())
        x = 0.0
        placed: list[tuple[Segment, QRectF]] = []
        for segment in self.segments:
            span = width * segment.count / total
            placed.append((segment, QRectF(x, 0, span, self._height)))
            x += span
        return placed

    def paintEvent(self, event: QPaintEvent) -> None:
        """Draw the track, then each segment, clipped to rounded ends."""
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        outline = QRectF(0, 0, self.width(), self._height)
        radius = self._height / 2
        clip = QPainterPath()
        clip.addRoundedRect(outline, radius, radius)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(theme.tint(theme.muted(), 0.18))
        painter.drawPath(clip)
        painter.setClipPath(clip)
        for segment, rect in self._rects():
            painter.setBrush(segment.color)
            painter.drawRect(rect)
        painter.end()

    def event(self, event: QEvent) -> bool:
        """Show the count of the segment under the pointer."""
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            point = QPointF(event.pos())
            for segment, rect in self._rects():
                if rect.left() <= point.x() <= rect.right():
                    share = 100.0 * segment.count / self.total
                    QToolTip.showText(
                        event.globalPos(), f"{segment.label}: {segment.count} ({share:.0f}%)", self
                    )
                    return True
        return super().event(event)
