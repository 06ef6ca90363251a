"""The list of tasks in review: whole titles first, sorted by id or waiting time, several chosen at once."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from enum import StrEnum

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QHBoxLayout, QHeaderView, QMenu, QTableView, QToolButton, QVBoxLayout, QWidget

from ralph_desk.gui import fmt, icons
from ralph_desk.gui.models.base import Column, RecordTableModel
from ralph_desk.gui.panes.inbox.reviews.entry import ReviewEntry
from ralph_desk.gui.widgets.common import button, label
from ralph_desk.gui.widgets.tables import WrappedCells, record_table

FAR_FUTURE = datetime.max.replace(tzinfo=UTC)


class ReviewOrder(StrEnum):
    """How the list is sorted."""

    WAITING = "waiting"
    ID = "id"


ORDER_TEXTS = {ReviewOrder.WAITING: "Longest waiting first", ReviewOrder.ID: "By task number"}


def details(entry: ReviewEntry) -> str:
    """The second line of a task's row: feature, how long it waits, sessions, merge state."""
    sessions = len(entry.sessions)
    parts = [
        entry.feature,
        f"done {fmt.ago(entry.since)}" if entry.since else "",
        f"{sessions} session{'s' if sessions != 1 else ''}",
        entry.merge or "awaits review",
    ]
    return " · ".join(part for part in parts if part)


def ordered(entries: Sequence[ReviewEntry], order: ReviewOrder) -> list[ReviewEntry]:
    """The entries in the chosen order (waiting longest first, or by task number)."""
    if order is ReviewOrder.ID:
        return sorted(entries, key=lambda entry: entry.task_id)
    return sorted(entries, key=lambda entry: (entry.since or FAR_FUTURE, entry.task_id))


LIST_COLUMNS: list[Column[ReviewEntry]] = [
    Column(
        "Task",
        lambda entry: f"#{entry.task_id}  {entry.title}\n{details(entry)}",
        tooltip=lambda entry: entry.summary or None,
    ),
]


class ReviewList(QWidget):
    """Tasks in review, each row its whole title then its details; a batch bar when several are chosen."""

    sig_batch_approve_requested = Signal()
    """Approve and merge every chosen task (`chosen()` says which)."""
    sig_batch_changes_requested = Signal()
    """Request changes on every chosen task."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.order = ReviewOrder.WAITING
        self.entries: list[ReviewEntry] = []
        self.model: RecordTableModel[ReviewEntry] = RecordTableModel(LIST_COLUMNS, key=lambda e: e.task_id)
        self.table: QTableView = record_table(self.model, multiple=True)
        self.table.setWordWrap(True)
        self.table.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.horizontalHeader().hide()
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.setItemDelegateForColumn(0, WrappedCells(self.table))
        # Rows are measured at their width: a narrower column (the splitter, the window) must measure again.
        self.table.horizontalHeader().sectionResized.connect(lambda *_: self.table.resizeRowsToContents())
        self.table.setVerticalScrollMode(QTableView.ScrollMode.ScrollPerPixel)
        self.table.setToolTip("Ctrl+click or Shift+click to choose several tasks, then approve them together")
        self.sort = QToolButton()  # a menu, not a combo box: the list is a narrow column on a small screen
        self.sort.setText("Sort")
        self.sort.setIcon(icons.icon("filter"))
        self.sort.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.sort.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.sort.setToolTip("The order of the tasks in review: longest waiting first, or by task number")
        menu = QMenu(self.sort)
        group = QActionGroup(menu)
        self.order_actions: dict[ReviewOrder, QAction] = {}
        for value, text in ORDER_TEXTS.items():
            action = menu.addAction(text)
            action.setCheckable(True)
            action.setChecked(value is self.order)
            group.addAction(action)
            action.triggered.connect(lambda _=False, chosen=value: self.set_order(chosen))
            self.order_actions[value] = action
        self.sort.setMenu(menu)
        self.chosen_label = label(name="muted")
        self.approve_all = button("Approve && merge", "merge", "Merge every chosen task into its base")
        self.changes_all = button(
            "Request changes…", "comment", "Send every chosen task back, with a message"
        )
        self.batch = QWidget()
        bar = QVBoxLayout(self.batch)  # stacked: the list is a narrow column on a small screen
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(self.chosen_label)
        bar.addWidget(self.approve_all)
        bar.addWidget(self.changes_all)
        self.batch.hide()
        heading = QHBoxLayout()
        heading.addWidget(self.sort)
        heading.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addLayout(heading)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.batch)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._show_batch())
        self.approve_all.clicked.connect(self.sig_batch_approve_requested)
        self.changes_all.clicked.connect(self.sig_batch_changes_requested)

    def set_entries(self, entries: Sequence[ReviewEntry]) -> None:
        """Show these tasks in review, in the chosen order."""
        self.entries = list(entries)
        self.model.set_items(ordered(self.entries, self.order))
        self._show_batch()

    def set_order(self, order: ReviewOrder) -> None:
        """Sort by `order` (the chosen tasks stay chosen)."""
        self.order = order
        self.order_actions[order].setChecked(True)
        self.model.set_items(ordered(self.entries, order))

    def chosen(self) -> list[ReviewEntry]:
        """The tasks chosen, in the list's order."""
        rows = sorted(index.row() for index in self.table.selectionModel().selectedRows())
        return [self.model.record(row) for row in rows]

    def step(self, delta: int) -> None:
        """Choose the task `delta` rows on (the first when none is) and give the list the keyboard."""
        rows = self.model.rowCount()
        if not rows:
            return
        current = self.table.currentIndex().row()
        self.table.selectRow(0 if current < 0 else max(0, min(rows - 1, current + delta)))
        self.table.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def _show_batch(self) -> None:
        count = len(self.table.selectionModel().selectedRows())
        self.batch.setVisible(count > 1)
        self.chosen_label.setText(f"{count} tasks chosen:")
