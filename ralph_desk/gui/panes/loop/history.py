"""The session history: the latest agent sessions with verb, outcome, turns, cost and transcript."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QVBoxLayout,
    QWidget,
)

from ralph_desk.gui import fmt
from ralph_desk.gui.models.base import RECORD_ROLE
from ralph_desk.gui.models.history import (
    COST,
    DURATION,
    OUTCOME,
    STARTED,
    TASK,
    TRANSCRIPT,
    TURNS,
    VERB,
    HistoryRow,
    HistoryTableModel,
)
from ralph_desk.gui.widgets.common import button, label
from ralph_desk.gui.widgets.empty_state import EmptyState
from ralph_desk.gui.widgets.layout import stacked
from ralph_desk.gui.widgets.tables import record_table

COLUMN_WIDTHS = {STARTED: 96, VERB: 82, OUTCOME: 116, TURNS: 50, COST: 58, DURATION: 72, TRANSCRIPT: 72}


LEAST_HEIGHT = 60
"""The least height of the history list (a few rows): on a small screen the window does not grow."""


class HistoryView(QWidget):
    """The sessions table; double-click shows a session's stream in the window, a button opens its file."""

    sig_open_transcript_requested = Signal(str)
    """Open this transcript file (as the session recorded it)."""
    sig_show_transcript_requested = Signal(str)
    """Show this transcript's session in the window, as the live view shows a session."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = HistoryTableModel(self)
        self.table = record_table(self.model, pills=(VERB, OUTCOME))
        self.table.setSortingEnabled(True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(TASK, QHeaderView.ResizeMode.Stretch)
        header.setHighlightSections(False)
        header.setSortIndicator(STARTED, Qt.SortOrder.DescendingOrder)
        for column, width in COLUMN_WIDTHS.items():
            self.table.setColumnWidth(column, width)
        self.table.doubleClicked.connect(self.show_at)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._update_button())
        self.show_button = button(
            "Show transcript", "session", "Show the selected session's stream above (double-click a row)"
        )
        self.show_button.clicked.connect(lambda: self.show_at(self.table.currentIndex()))
        self.open_button = button("Open file", "external", "Open the selected session's transcript file")
        self.open_button.clicked.connect(lambda: self.open_at(self.table.currentIndex()))
        self.summary = label(name="muted")
        self.empty = EmptyState(
            "timeline",
            "No session has run yet",
            "Every session the loop runs is listed here: its task, the verb that closed it, what came of "
            "it, its turns and cost, and a link to its transcript.",
        )
        self.stack = stacked(self.table, self.empty)
        self.stack.setMinimumHeight(LEAST_HEIGHT)  # its empty note scrolls rather than make the window grow
        top = QHBoxLayout()
        top.addWidget(label("Session history", name="subheading"))
        top.addStretch(1)
        top.addWidget(self.summary)
        bottom = QHBoxLayout()
        bottom.addStretch(1)
        bottom.addWidget(self.show_button)
        bottom.addWidget(self.open_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(top)
        layout.addWidget(self.stack, 1)
        layout.addLayout(bottom)
        self._update_button()

    def show_rows(self, rows: list[HistoryRow]) -> None:
        """Show these sessions (the selection stays where its row does)."""
        self.model.set_items(rows)
        self.stack.setCurrentWidget(self.table if rows else self.empty)
        cost = sum(row.session.cost_usd for row in rows)
        self.summary.setText(f"{fmt.plural(len(rows), 'session')} · {fmt.money(cost)}" if rows else "")
        self._update_button()

    def open_at(self, index: QModelIndex) -> None:
        """Ask to open the transcript file of the session at `index`."""
        path = self._transcript_at(index)
        if path:
            self.sig_open_transcript_requested.emit(path)

    def show_at(self, index: QModelIndex) -> None:
        """Ask to show the session at `index` in the window."""
        path = self._transcript_at(index)
        if path:
            self.sig_show_transcript_requested.emit(path)

    def _transcript_at(self, index: QModelIndex) -> str:
        record = index.data(RECORD_ROLE) if index.isValid() else None
        return record.session.transcript_path or "" if isinstance(record, HistoryRow) else ""

    def _update_button(self) -> None:
        index = self.table.currentIndex()
        record = index.data(RECORD_ROLE) if index.isValid() else None
        has_transcript = isinstance(record, HistoryRow) and bool(record.session.transcript_path)
        self.open_button.setEnabled(has_transcript)
        self.show_button.setEnabled(has_transcript)
