"""A feature's learnings: a table to edit one, delete one, or merge duplicates into one."""

from __future__ import annotations

from PySide6.QtCore import QItemSelection, Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ralph_desk.domain.records import FeatureLearning
from ralph_desk.gui import fmt
from ralph_desk.gui.dialogs.confirm import ConfirmBox, confirm
from ralph_desk.gui.models.features import ADDED, HITS, SOURCE, TASK, TEXT, LearningTableModel
from ralph_desk.gui.panes.features.dialogs import LearningDialog, MergeDialog
from ralph_desk.gui.widgets.common import button, label
from ralph_desk.gui.widgets.empty_state import EmptyState
from ralph_desk.gui.widgets.layout import stacked
from ralph_desk.gui.widgets.tables import record_table

COLUMN_WIDTHS = {SOURCE: 84, HITS: 52, TASK: 56, ADDED: 96}


class LearningsView(QWidget):
    """The learnings table with Edit, Delete and Merge; every change is asked for through a signal."""

    sig_update_requested = Signal(int, str, object)
    """Replace a learning's text and reason (id, text, reason or None)."""
    sig_delete_requested = Signal(int)
    """Delete the learning with this id."""
    sig_merge_requested = Signal(int, object)
    """Fold the learnings with these ids (a list) into the one with the first id."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = LearningTableModel(self)
        self.table = self._build_table()
        self.edit_dialog: LearningDialog | None = None
        self.merge_dialog: MergeDialog | None = None
        self.confirm_box: ConfirmBox | None = None
        self.edit_button = button("Edit…", "edit", "Change the selected learning's text or reason")
        self.delete_button = button("Delete", "trash", "Delete the selected learnings")
        self.merge_button = button(
            "Merge duplicates…", "merge", "Fold the selected learnings into one; their hit counts add up"
        )
        self.edit_button.clicked.connect(self.edit_selected)
        self.delete_button.clicked.connect(self.delete_selected)
        self.merge_button.clicked.connect(self.merge_selected)
        self.hint = label(name="muted", wrap=True)
        self.empty = EmptyState(
            "features",
            "No learnings yet",
            "Agents record what they find out with <code>learned</code>; it collects here, by feature, "
            "and reaches every later session on it. Duplicates raise a hit count.",
        )
        self.stack = stacked(self.table, self.empty)
        actions = QHBoxLayout()
        actions.addWidget(self.hint, 1)
        actions.addWidget(self.edit_button)
        actions.addWidget(self.delete_button)
        actions.addWidget(self.merge_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(self.stack, 1)
        layout.addLayout(actions)
        self._update_buttons()

    def _build_table(self) -> QTableView:
        table = record_table(self.model, multiple=True)
        table.setSortingEnabled(True)
        header = table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(TEXT, QHeaderView.ResizeMode.Stretch)
        header.setHighlightSections(False)
        header.setSortIndicator(HITS, Qt.SortOrder.DescendingOrder)
        for column, width in COLUMN_WIDTHS.items():
            table.setColumnWidth(column, width)
        table.doubleClicked.connect(lambda _index: self.edit_selected())
        table.selectionModel().selectionChanged.connect(self._on_selection)
        return table

    def show_learnings(self, learnings: list[FeatureLearning]) -> None:
        """Show exactly these learnings (selection kept where the rows stay)."""
        self.model.set_items(learnings)
        self.stack.setCurrentWidget(self.table if learnings else self.empty)
        self._update_buttons()

    def selected(self) -> list[FeatureLearning]:
        """The selected learnings, in table order."""
        rows = sorted(index.row() for index in self.table.selectionModel().selectedRows())
        return [self.model.record(row) for row in rows]

    def select_ids(self, ids: list[int]) -> None:
        """Select the learnings with these ids."""
        selection = QItemSelection()
        for learning_id in ids:
            row = self.model.row_of(learning_id)
            if row is not None:
                selection.select(
                    self.model.index(row, 0), self.model.index(row, self.model.columnCount() - 1)
                )
        flags = self.table.selectionModel().SelectionFlag.ClearAndSelect
        self.table.selectionModel().select(selection, flags)

    def edit_selected(self) -> None:
        """Open the selected learning to edit it."""
        chosen = self.selected()
        if len(chosen) != 1:
            return
        dialog = LearningDialog(chosen[0], self)
        dialog.accepted.connect(lambda: self.sig_update_requested.emit(dialog.learning.id, *dialog.values()))
        self.edit_dialog = dialog
        dialog.open()

    def delete_selected(self) -> None:
        """Ask, then delete the selected learnings."""
        chosen = self.selected()
        if not chosen:
            return
        what = (
            f"“{fmt.one_line(chosen[0].text, 90)}”"
            if len(chosen) == 1
            else fmt.plural(len(chosen), "learning")
        )
        ids = [learning.id for learning in chosen]
        self.confirm_box = confirm(
            self,
            "Delete learnings",
            f"Delete {what}? Later sessions will no longer read it.",
            "Delete",
            lambda: self._request_delete(ids),
        )

    def _request_delete(self, ids: list[int]) -> None:
        for learning_id in ids:
            self.sig_delete_requested.emit(learning_id)

    def merge_selected(self) -> None:
        """Ask which of the selected learnings to keep, then merge the others into it."""
        chosen = self.selected()
        if len(chosen) < 2:
            return
        dialog = MergeDialog(chosen, self)
        ids = [learning.id for learning in chosen]
        dialog.accepted.connect(lambda: self.sig_merge_requested.emit(dialog.keep_id(), ids))
        self.merge_dialog = dialog
        dialog.open()

    def _on_selection(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        self._update_buttons()

    def _update_buttons(self) -> None:
        count = len(self.table.selectionModel().selectedRows())
        self.edit_button.setEnabled(count == 1)
        self.delete_button.setEnabled(count >= 1)
        self.merge_button.setEnabled(count >= 2)
        total = self.model.rowCount()
        if not total:
            self.hint.setText("")
        elif count >= 2:
            self.hint.setText(f"{count} selected: merge them if they say the same thing.")
        else:
            self.hint.setText(
                f"{fmt.plural(total, 'learning')} · select several (Ctrl/Shift+click) to merge duplicates"
            )
