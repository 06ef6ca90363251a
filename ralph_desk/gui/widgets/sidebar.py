"""The sidebar of panes: an icon, a name and a count badge per pane."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import (
    QFrame,
    QListWidget,
    QListWidgetItem,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.gui import icons, theme

UNSAVED_MARK = "●"
BADGE_ROLE = Qt.ItemDataRole.UserRole + 1
WIDTH = 188
ROW_HEIGHT = 40
ICON_SIZE = 20


@dataclass(frozen=True)
class PaneEntry:
    """One pane as the sidebar lists it."""

    key: str
    title: str
    icon: str
    tooltip: str


class _SidebarDelegate(QStyledItemDelegate):
    """Draws a row: selection, icon, name and (when non-zero) a count badge."""

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        """Draw one sidebar row."""
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        rect = option.rect.adjusted(8, 2, -8, -2)
        tones = theme.tones()
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        hovered = bool(option.state & QStyle.StateFlag.State_MouseOver)
        if selected or hovered:
            fill = theme.tint(QColor(tones.accent), 0.18 if selected else 0.08)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(fill)
            painter.drawRoundedRect(QRectF(rect), 6, 6)
        text_color = QColor(tones.accent) if selected else QColor(tones.text)
        icon_name = str(index.data(Qt.ItemDataRole.UserRole) or "")
        icon_rect = QRect(rect.left() + 10, rect.center().y() - ICON_SIZE // 2 + 1, ICON_SIZE, ICON_SIZE)
        icons.icon(icon_name, text_color).paint(painter, icon_rect)
        font = QFont(option.font)
        font.setBold(selected)
        painter.setFont(font)
        painter.setPen(text_color)
        text_rect = rect.adjusted(10 + ICON_SIZE + 10, 0, -8, 0)
        painter.drawText(text_rect, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, index.data())
        badge = int(index.data(BADGE_ROLE) or 0)
        if badge:
            self._paint_badge(painter, rect, str(badge), font)
        painter.restore()

    def _paint_badge(self, painter: QPainter, rect: QRect, text: str, font: QFont) -> None:
        badge_font = QFont(font)
        badge_font.setBold(True)
        badge_font.setPointSizeF(max(7.0, font.pointSizeF() * 0.85))
        metrics = QFontMetrics(badge_font)
        height = metrics.height() + 2
        width = max(height, metrics.horizontalAdvance(text) + 10)
        box = QRectF(rect.right() - 8 - width, rect.center().y() - height / 2 + 1, width, height)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(theme.status_color(TaskStatus.NEEDS_INPUT))
        painter.drawRoundedRect(box, height / 2, height / 2)
        painter.setFont(badge_font)
        painter.setPen(
            QColor("#ffffff") if theme.current_scheme() is theme.Scheme.LIGHT else QColor("#1d2026")
        )
        painter.drawText(box, Qt.AlignmentFlag.AlignCenter, text)

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        """A fixed row height."""
        return QSize(WIDTH - 8, ROW_HEIGHT)


class Sidebar(QListWidget):
    """The list of panes; selecting one asks the window to show it."""

    sig_pane_requested = Signal(int)
    """Show the pane at this index."""

    def __init__(self, entries: list[PaneEntry], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sidebar")
        self.setFixedWidth(WIDTH)
        self.setItemDelegate(_SidebarDelegate(self))
        self.setMouseTracking(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSpacing(1)
        self.entries = entries
        for number, entry in enumerate(entries, start=1):
            item = QListWidgetItem(entry.title)
            item.setData(Qt.ItemDataRole.UserRole, entry.icon)
            item.setToolTip(f"{entry.tooltip} (Ctrl+{number})")
            self.addItem(item)
        self.currentRowChanged.connect(self.sig_pane_requested)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setViewportMargins(0, 10, 0, 10)
        self.refresh_style()

    def refresh_style(self) -> None:
        """Take the sidebar colour of the current scheme."""
        palette = self.palette()
        shade = QColor(theme.tones().sidebar)
        palette.setColor(QPalette.ColorRole.Base, shade)
        palette.setColor(QPalette.ColorRole.Window, shade)
        self.setPalette(palette)
        self.setAutoFillBackground(True)
        self.viewport().update()

    def set_badge(self, key: str, count: int) -> None:
        """Show `count` on the pane `key` (nothing when zero)."""
        for row, entry in enumerate(self.entries):
            if entry.key == key:
                item = self.item(row)
                item.setData(BADGE_ROLE, count)
                item.setToolTip(self._tooltip(row, count))

    def set_unsaved(self, key: str, unsaved: bool) -> None:
        """Mark the pane `key` as holding unsaved edits (a dot after its name)."""
        for row, entry in enumerate(self.entries):
            if entry.key == key:
                self.item(row).setText(f"{entry.title} {UNSAVED_MARK}" if unsaved else entry.title)

    def unsaved(self, key: str) -> bool:
        """Whether the pane `key` is marked as holding unsaved edits."""
        row = next(row for row, entry in enumerate(self.entries) if entry.key == key)
        return self.item(row).text().endswith(UNSAVED_MARK)

    def badge(self, key: str) -> int:
        """The count shown on the pane `key`."""
        for row, entry in enumerate(self.entries):
            if entry.key == key:
                return int(self.item(row).data(BADGE_ROLE) or 0)
        raise KeyError(key)

    def _tooltip(self, row: int, count: int) -> str:
        entry = self.entries[row]
        waiting = f" — {count} waiting" if count else ""
        return f"{entry.tooltip}{waiting} (Ctrl+{row + 1})"
