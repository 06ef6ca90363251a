"""The Tasks pane: the filter bar, the task table and the detail of the selected task."""

from __future__ import annotations

from PySide6.QtCore import QItemSelection, QItemSelectionModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QTableView,
    QWidget,
)

from ralph_desk.domain.records import TaskSummary
from ralph_desk.gui import fmt
from ralph_desk.gui.models.base import KEY_ROLE
from ralph_desk.gui.models.tasks import (
    DISCIPLINE,
    FEATURE,
    ID,
    ORIGIN,
    PRIORITY,
    STATUS,
    TITLE,
    TaskFilter,
    TaskFilterProxy,
    TaskTableModel,
)
from ralph_desk.gui.panes.tasks.detail import TaskDetail
from ralph_desk.gui.panes.tasks.filters import TaskFilterBar
from ralph_desk.gui.unsaved import SelectionGuard
from ralph_desk.gui.widgets.common import button, label
from ralph_desk.gui.widgets.empty_state import EmptyState
from ralph_desk.gui.widgets.layout import pane_layout, side_by_side, stacked, title_row
from ralph_desk.gui.widgets.tables import record_table

ROW_HEIGHT = 28
COLUMN_WIDTHS = {ID: 52, STATUS: 114, PRIORITY: 82, FEATURE: 108, DISCIPLINE: 86, ORIGIN: 74}


class TasksPane(QWidget):
    """Every task in a table that filters and sorts in the window; the selected one in detail."""

    sig_task_selected = Signal(int)
    """The person selected the task with this id (0: none)."""
    sig_new_task_requested = Signal()
    """Open the dialog for a new task."""
    sig_delete_requested = Signal(int)
    """Delete the task with this id (after asking)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = TaskTableModel(self)
        self.proxy = TaskFilterProxy(self.model, self)
        self.filters = TaskFilterBar()
        self.filters.sig_filter_changed.connect(self.apply_filter)
        self.detail = TaskDetail()
        self.guard: SelectionGuard[int] = SelectionGuard(
            self.detail.fields, lambda task_id: f"task #{task_id}", self._select_key, self
        )
        self.table = self._build_table()
        self.detail.sig_open_task_requested.connect(self.select_task)
        self.splitter = side_by_side(self._table_area(), self.detail, (3, 2))
        self.empty = EmptyState(
            "tasks",
            "No tasks yet",
            "Import user stories with <code>ralph-desk import-prd prd.json</code>, create tasks through an "
            "MCP client (<i>File › Connect a client…</i>), or let agents suggest them.",
        )
        self.stack = stacked(self.splitter, self.empty)
        self.heading = label("Tasks", name="heading")
        self.count = label(name="muted")
        self.new_button = button("New task…", "add", "Create a task (Ctrl+N)")
        self.new_button.clicked.connect(self.sig_new_task_requested)
        self.delete_button = button("Delete…", "trash", "Delete the selected task (Delete)")
        self.delete_button.clicked.connect(self._request_delete)
        top = title_row(self.heading, self.count)
        top.addSpacing(12)
        top.addWidget(self.new_button)
        top.addWidget(self.delete_button)
        pane_layout(self, top, self.filters, self.stack)
        QShortcut(QKeySequence.StandardKey.New, self, self.sig_new_task_requested.emit)
        delete = QShortcut(QKeySequence.StandardKey.Delete, self.table, self._request_delete)
        delete.setContext(Qt.ShortcutContext.WidgetShortcut)
        QShortcut(QKeySequence.StandardKey.Find, self, self.filters.search.setFocus)
        QShortcut(QKeySequence.StandardKey.Save, self, self.detail.fields.request_save)
        for signal in (self.proxy.rowsInserted, self.proxy.rowsRemoved, self.proxy.modelReset):
            signal.connect(self._update_count)
        self._update_count()
        self.delete_button.setEnabled(False)

    def _build_table(self) -> QTableView:
        table = record_table(self.proxy, pills=(STATUS, PRIORITY))
        table.setTextElideMode(Qt.TextElideMode.ElideRight)
        rows = table.verticalHeader()
        # A fixed row height keeps a 10,000-row table from measuring every row.
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        rows.setDefaultSectionSize(ROW_HEIGHT)
        header = table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(TITLE, QHeaderView.ResizeMode.Stretch)
        header.setHighlightSections(False)
        for column, width in COLUMN_WIDTHS.items():
            table.setColumnWidth(column, width)
        header.setSortIndicator(ID, Qt.SortOrder.AscendingOrder)
        table.setSortingEnabled(True)
        table.selectionModel().selectionChanged.connect(self._on_selection)
        return table

    def _table_area(self) -> QWidget:
        self.no_match = EmptyState(
            "filter", "No task matches these filters", "Change or clear the filters.", action="Clear filters"
        )
        self.no_match.sig_action_requested.connect(self.filters.clear_filters)
        self.table_stack = stacked(self.table, self.no_match)
        return self.table_stack

    # --- content ------------------------------------------------------------------------------

    def show_tasks(self, tasks: list[TaskSummary]) -> None:
        """Show exactly these tasks (rows of kept tasks stay, with their selection)."""
        self.model.set_items(tasks)
        self._update_count()

    def update_tasks(self, changed: list[TaskSummary], removed: list[int]) -> None:
        """Replace or add the changed tasks and drop the removed ones."""
        if removed:
            self.model.remove_keys(removed)
        if changed:
            self.model.upsert(changed)
        self._update_count()

    def set_choices(self, features: list[str], disciplines: list[str]) -> None:
        """Offer these features and disciplines in the filters and the editor."""
        self.filters.set_choices(features, disciplines)
        self.detail.fields.set_choices(features, disciplines)

    def apply_filter(self, task_filter: TaskFilter) -> None:
        """Show only the tasks `task_filter` accepts."""
        self.proxy.set_filter(task_filter)
        self._update_count()

    def selected_id(self) -> int | None:
        """The id of the selected task, if any."""
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return None
        key = rows[0].data(KEY_ROLE)
        return int(key) if key is not None else None

    def select_task(self, task_id: int) -> bool:
        """Select a task (clearing filters that hide it); whether it exists."""
        source_row = self.model.row_of(task_id)
        if source_row is None:
            return False
        index = self.proxy.mapFromSource(self.model.index(source_row, 0))
        if not index.isValid():
            self.filters.clear_filters()
            index = self.proxy.mapFromSource(self.model.index(source_row, 0))
        flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        self.table.selectionModel().setCurrentIndex(index, flags)
        self.table.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
        return True

    def _select_key(self, task_id: int | None) -> None:
        if task_id is None or not self.select_task(task_id):
            self.table.clearSelection()

    def _on_selection(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        selected = self.selected_id()
        if not self.guard.allow(selected):
            return
        self.delete_button.setEnabled(selected is not None)
        self.sig_task_selected.emit(selected or 0)

    def _request_delete(self) -> None:
        selected = self.selected_id()
        if selected is not None:
            self.sig_delete_requested.emit(selected)

    def _update_count(self, *_args: object) -> None:
        total = self.model.rowCount()
        shown = self.proxy.rowCount()
        self.stack.setCurrentWidget(self.splitter if total else self.empty)
        self.table_stack.setCurrentWidget(self.table if shown or not total else self.no_match)
        if shown == total:
            self.count.setText(fmt.plural(total, "task"))
        else:
            self.count.setText(f"{shown:,} of {fmt.plural(total, 'task')}")

    def current_index(self) -> QModelIndex:
        """The table's current index."""
        return self.table.currentIndex()
