"""Record tables set up the one way the panes show them: whole rows, striped, no grid or row numbers."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QAbstractItemModel
from PySide6.QtWidgets import QAbstractItemView, QTableView

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
