"""The shape of the Features and Disciplines panes: named records listed left, the selected one right."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from PySide6.QtCore import QItemSelection, QItemSelectionModel, Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QHeaderView, QTableView, QVBoxLayout, QWidget

from ralph_desk.gui import fmt
from ralph_desk.gui.dialogs.confirm import ConfirmBox, confirm
from ralph_desk.gui.dialogs.new_record import NewRecordDialog
from ralph_desk.gui.models.base import KEY_ROLE
from ralph_desk.gui.models.named import N, NamedRecordModel
from ralph_desk.gui.unsaved import Editor, SelectionGuard
from ralph_desk.gui.widgets.common import button, label
from ralph_desk.gui.widgets.empty_state import EmptyState
from ralph_desk.gui.widgets.layout import pane_layout, side_by_side, stacked, title_row
from ralph_desk.gui.widgets.tables import record_table

D = TypeVar("D", bound=QWidget)


@dataclass(frozen=True)
class NamedPaneSpec:
    """What a named-record pane says and how wide its parts start."""

    noun: str
    heading: str
    new_label: str
    empty_text: str
    delete_question: str
    """Asked before a delete; `{name}` stands for the record's name."""
    new_dialog: Callable[[list[str], QWidget], NewRecordDialog]
    sizes: tuple[int, int]
    fitted_columns: tuple[int, ...]
    """List columns as wide as their contents (the first takes the rest)."""
    list_min_width: int | None = None


class NamedRecordPane(QWidget, Generic[N, D]):
    """Every record in a list with New and Delete; the selected one in `detail`. Widgets only show and ask."""

    sig_selected = Signal(str)
    """The person selected the record with this name (empty: none)."""
    sig_create_requested = Signal(object)
    """Create a record with these fields (a dict, as the new-record dialog gives them)."""
    sig_delete_requested = Signal(str)
    """Delete the record with this name."""
    sig_save_requested = Signal(str, object)
    """Save these changes (a dict) to the record with this name."""

    def __init__(
        self,
        model: NamedRecordModel[N],
        detail: D,
        spec: NamedPaneSpec,
        editor: Editor,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.spec = spec
        self.guard: SelectionGuard[str] = SelectionGuard(
            editor, lambda name: f"the {spec.noun} {name}", self._select_key, self
        )
        self.model = model
        model.setParent(self)
        self.table = self._build_table()
        self.detail = detail
        self.new_dialog: NewRecordDialog | None = None
        self.confirm_box: ConfirmBox | None = None
        self.new_button = button(spec.new_label, "add", f"Create a {spec.noun}")
        self.delete_button = button(
            "Delete", "trash", f"Delete the selected {spec.noun} (only when no task uses it)"
        )
        self.new_button.clicked.connect(self.ask_new)
        self.delete_button.clicked.connect(self.ask_delete)
        self.splitter = side_by_side(self._list_area(), detail, (0, 1), list(spec.sizes))
        plural = spec.heading.lower()
        self.empty = EmptyState(plural, f"No {plural} yet", spec.empty_text, action=f"New {spec.noun}…")
        self.empty.sig_action_requested.connect(self.ask_new)
        self.stack = stacked(self.splitter, self.empty)
        self.heading = label(spec.heading, name="heading")
        self.count = label(name="muted")
        pane_layout(self, title_row(self.heading, self.count), self.stack)
        self._update()

    def _build_table(self) -> QTableView:
        table = record_table(self.model)
        table.setSortingEnabled(True)
        table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        header = table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in self.spec.fitted_columns:
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setHighlightSections(False)
        header.setSortIndicator(0, Qt.SortOrder.AscendingOrder)
        table.selectionModel().selectionChanged.connect(self._on_selection)
        return table

    def _list_area(self) -> QWidget:
        area = QWidget()
        buttons = QHBoxLayout()
        buttons.addWidget(self.new_button)
        buttons.addStretch(1)
        buttons.addWidget(self.delete_button)
        layout = QVBoxLayout(area)
        layout.setContentsMargins(0, 0, 6, 0)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)
        if self.spec.list_min_width is not None:
            area.setMinimumWidth(self.spec.list_min_width)
        return area

    # --- content ------------------------------------------------------------------------------

    def show_records(self, records: list[N]) -> None:
        """Show exactly these records (the selection stays on one that is still there)."""
        self.model.set_items(records)
        if self.selected_name() is None and records:
            self.table.selectRow(0)
        self._update()

    def names(self) -> list[str]:
        """The names of the records shown."""
        return [record.name for record in self.model.items]

    def selected_name(self) -> str | None:
        """The name of the selected record, if any."""
        rows = self.table.selectionModel().selectedRows()
        return str(rows[0].data(KEY_ROLE)) if rows else None

    def select_name(self, name: str) -> bool:
        """Select a record by name and scroll to it; whether it is listed."""
        row = self.model.row_of(name)
        if row is None:
            return False
        index = self.model.index(row, 0)
        flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        self.table.selectionModel().setCurrentIndex(index, flags)
        self.table.scrollTo(index)
        return True

    # --- requests -----------------------------------------------------------------------------

    def ask_new(self) -> None:
        """Open the new-record dialog."""
        dialog = self.spec.new_dialog(self.names(), self)
        dialog.accepted.connect(lambda: self.sig_create_requested.emit(dialog.values()))
        self.new_dialog = dialog
        dialog.open()

    def ask_delete(self) -> None:
        """Ask, then delete the selected record."""
        name = self.selected_name()
        if name is None:
            return
        self.confirm_box = confirm(
            self,
            f"Delete a {self.spec.noun}",
            self.spec.delete_question.format(name=name),
            "Delete",
            lambda: self.sig_delete_requested.emit(name),
        )

    def _select_key(self, name: str | None) -> None:
        if name is None or not self.select_name(name):
            self.table.clearSelection()

    def _on_selection(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        if not self.guard.allow(self.selected_name()):
            return
        self.delete_button.setEnabled(self.selected_name() is not None)
        self.sig_selected.emit(self.selected_name() or "")

    def _update(self) -> None:
        total = self.model.rowCount()
        self.stack.setCurrentWidget(self.splitter if total else self.empty)
        self.count.setText(fmt.plural(total, self.spec.noun))
        self.delete_button.setEnabled(self.selected_name() is not None)

    def refresh_style(self) -> None:
        """Redraw colours and icons after the palette changed."""
        self.model.refresh_all()
        self.empty.refresh_style()
