"""A table model over a plain list of records, updated in place so views keep selection and scroll."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QIcon

from ralph_desk.gui.widgets.pill import COLOR_ROLE

T = TypeVar("T")

KEY_ROLE = Qt.ItemDataRole.UserRole + 1
"""The role that gives a row's record key (an id)."""
RECORD_ROLE = Qt.ItemDataRole.UserRole + 2
"""The role that gives a row's record itself."""

Index = QModelIndex | QPersistentModelIndex
_ROOT = QModelIndex()


@dataclass(frozen=True)
class Column(Generic[T]):
    """How one column shows a record: text, and optionally a sort key, tooltip, icon, pill colour."""

    title: str
    text: Callable[[T], str]
    sort_key: Callable[[T], Any] | None = None
    tooltip: Callable[[T], str | None] | None = None
    icon: Callable[[T], QIcon | None] | None = None
    color: Callable[[T], QColor | None] | None = None
    align_right: bool = False
    header_tip: str | None = None


class RecordTableModel(QAbstractTableModel, Generic[T]):
    """Rows are records of a plain list; `set_items` applies removals, insertions and changes row by row."""

    def __init__(
        self, columns: Sequence[Column[T]], key: Callable[[T], Hashable], parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.columns = list(columns)
        self._key = key
        self._items: list[T] = []
        self._rows: dict[Hashable, int] = {}
        self._sort: tuple[int, Qt.SortOrder] | None = None

    # --- reading ------------------------------------------------------------------------------

    @property
    def items(self) -> list[T]:
        """The records in row order (a copy)."""
        return list(self._items)

    def record(self, row: int) -> T:
        """The record of a row."""
        return self._items[row]

    def row_of(self, key: Hashable) -> int | None:
        """The row of the record with `key`, if present."""
        return self._rows.get(key)

    def rowCount(self, parent: Index = _ROOT) -> int:
        """How many records (none under a child index)."""
        return 0 if parent.isValid() else len(self._items)

    def columnCount(self, parent: Index = _ROOT) -> int:
        """How many columns (none under a child index)."""
        return 0 if parent.isValid() else len(self.columns)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """A cell's text, tooltip, icon, pill colour, key or record."""
        if not index.isValid() or not 0 <= index.row() < len(self._items):
            return None
        item = self._items[index.row()]
        column = self.columns[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return column.text(item)
        if role == Qt.ItemDataRole.ToolTipRole:
            return column.tooltip(item) if column.tooltip else None
        if role == Qt.ItemDataRole.DecorationRole:
            return column.icon(item) if column.icon else None
        if role == COLOR_ROLE:
            return column.color(item) if column.color else None
        if role == Qt.ItemDataRole.TextAlignmentRole and column.align_right:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == KEY_ROLE:
            return self._key(item)
        if role == RECORD_ROLE:
            return item
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """Column titles (and their tooltips); rows have none."""
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(self.columns):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self.columns[section].title
        if role == Qt.ItemDataRole.ToolTipRole:
            return self.columns[section].header_tip
        return None

    # --- changing -----------------------------------------------------------------------------

    def set_items(self, items: Sequence[T]) -> None:
        """Show exactly `items` (kept in the current sort), touching only rows that differ."""
        new = self._sorted(list(items))
        new_keys = [self._key(item) for item in new]
        wanted = set(new_keys)
        self._remove_rows(lambda key: key not in wanted)
        kept_keys = [key for key in new_keys if key in self._rows]
        if kept_keys != [self._key(item) for item in self._items]:
            by_key = {self._key(item): item for item in self._items}
            self._reorder([by_key[key] for key in kept_keys])
        self._insert_missing(new, new_keys)
        self._update_changed(new)

    def upsert(self, items: Sequence[T], order: Callable[[T], Any] | None = None) -> None:
        """Add or replace these records, leaving the others as they are.

        New records go last, or where `order` (the order the rows are in) puts them; a sorted model
        keeps its sort.
        """
        last_column = len(self.columns) - 1
        added: list[T] = []
        for item in items:
            row = self._rows.get(self._key(item))
            if row is None:
                added.append(item)
            elif self._items[row] != item:
                self._items[row] = item
                self.dataChanged.emit(self.index(row, 0), self.index(row, last_column))
        for item in added:
            row = len(self._items)
            if order is not None:
                # The rows are in `order`: a few of them are asked where the new one goes, not all.
                row = bisect.bisect_left(self._items, order(item), key=order)
            self.beginInsertRows(_ROOT, row, row)
            self._items.insert(row, item)
            self.endInsertRows()
        if added:
            self._reindex()
        if self._sort is not None and items:
            ordered = self._sorted(list(self._items))
            if ordered != self._items:
                self._reorder(ordered)

    def remove_keys(self, keys: Sequence[Hashable]) -> None:
        """Drop the records with these keys."""
        gone = set(keys)
        self._remove_rows(lambda key: key in gone)

    def refresh_all(self) -> None:
        """Tell views every cell may read differently (the records are the same)."""
        if self._items:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._items) - 1, len(self.columns) - 1))

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Order the rows by a column (its sort key, else its text); selections follow their rows."""
        if not 0 <= column < len(self.columns):
            return
        self._sort = (column, order)
        ordered = self._sorted(list(self._items))
        if any(new is not old for new, old in zip(ordered, self._items, strict=True)):
            self._reorder(ordered)

    # --- internals ----------------------------------------------------------------------------

    def _sorted(self, items: list[T]) -> list[T]:
        if self._sort is None:
            return items
        column, order = self._sort
        spec = self.columns[column]
        key = spec.sort_key or spec.text
        return sorted(items, key=key, reverse=order == Qt.SortOrder.DescendingOrder)

    def _reindex(self) -> None:
        self._rows = {self._key(item): row for row, item in enumerate(self._items)}

    def _remove_rows(self, doomed: Callable[[Hashable], bool]) -> None:
        rows = [row for row, item in enumerate(self._items) if doomed(self._key(item))]
        if not rows:
            return
        # Contiguous runs, bottom first, so earlier row numbers stay valid.
        for first, last in reversed(_runs(rows)):
            self.beginRemoveRows(_ROOT, first, last)
            del self._items[first : last + 1]
            self.endRemoveRows()
        self._reindex()

    def _insert_missing(self, new: list[T], new_keys: list[Hashable]) -> None:
        present = set(self._rows)
        rows = [row for row, key in enumerate(new_keys) if key not in present]
        for first, last in _runs(rows):
            self.beginInsertRows(_ROOT, first, last)
            self._items[first:first] = new[first : last + 1]
            self.endInsertRows()
        if rows:
            self._reindex()

    def _update_changed(self, new: list[T]) -> None:
        last_column = len(self.columns) - 1
        for row, item in enumerate(new):
            if self._items[row] != item:
                self._items[row] = item
                self.dataChanged.emit(self.index(row, 0), self.index(row, last_column))

    def _reorder(self, ordered: list[T]) -> None:
        """Put the same records in a new order, moving persistent indexes with them."""
        self.layoutAboutToBeChanged.emit()
        new_rows = {self._key(item): row for row, item in enumerate(ordered)}
        moved_from: list[QModelIndex] = []
        moved_to: list[QModelIndex] = []
        for index in self.persistentIndexList():
            if not index.isValid():
                continue
            key = self._key(self._items[index.row()])
            moved_from.append(index)
            moved_to.append(self.index(new_rows[key], index.column()))
        self._items = ordered
        self._reindex()
        self.changePersistentIndexList(moved_from, moved_to)
        self.layoutChanged.emit()


def _runs(rows: list[int]) -> list[tuple[int, int]]:
    """Sorted row numbers as (first, last) runs of consecutive rows."""
    runs: list[tuple[int, int]] = []
    for row in rows:
        if runs and runs[-1][1] == row - 1:
            runs[-1] = (runs[-1][0], row)
        else:
            runs.append((row, row))
    return runs
