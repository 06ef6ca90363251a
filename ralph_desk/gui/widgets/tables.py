"""Record tables set up the one way the panes show them: whole rows, striped, no grid or row numbers."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, QSize, Qt
from PySide6.QtWidgets import QAbstractItemView, QStyledItemDelegate, QStyleOptionViewItem, QTableView

from ralph_desk.gui.clipping import CELL_PADDING_PX
from ralph_desk.gui.widgets.pill import PillDelegate


def record_table(model: QAbstractItemModel, pills: Sequence[int] = (), multiple: bool = False) -> QTableView:
    """A table over `model` selecting whole rows (one unless `multiple`), with pills in `pills` columns."""
    table = QTableView()
    table.setModel(model)
    for column in pills:
        table.setItemDelegateForColumn(column, PillDelegate(table))
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    mode = QAbstractItemView.SelectionMode
    table.setSelectionMode(mode.ExtendedSelection if multiple else mode.SingleSelection)
    table.verticalHeader().hide()
    table.setShowGrid(False)
    table.setAlternatingRowColors(True)
    table.setWordWrap(False)
    table.setTabKeyNavigation(False)  # Tab leaves the table; arrows move within it
    return table


class WrappedCells(QStyledItemDelegate):
    """A wrapped cell as tall as its text wrapped at the cell's width less CELL_PADDING_PX: the width the
    style leaves it, measured as `clipping.clipped_cells` measures (Qt's own hint could be a line short)."""

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        hint = super().sizeHint(option, index)
        width = option.rect.width() - CELL_PADDING_PX
        if width <= 0:
            return hint
        text = str(index.data() or "")
        metrics = option.fontMetrics
        needed = metrics.boundingRect(0, 0, width, 100_000, Qt.TextFlag.TextWordWrap, text)
        return QSize(hint.width(), max(hint.height(), needed.height() + CELL_PADDING_PX))
