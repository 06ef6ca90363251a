"""The Dashboard pane: progress by status and feature, cost to date, inbox counts, recent activity."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QModelIndex, QSize, Qt, Signal
from PySide6.QtGui import QColor, QMouseEvent, QPalette
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLayout,
    QScrollArea,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ralph_desk.domain.enums import TaskStatus, Verb
from ralph_desk.domain.records import AgentSession
from ralph_desk.domain.records import Signal as SignalRecord
from ralph_desk.domain.totals import ProjectTotals, Rate, SessionTotals, StatusCounts, Throughput
from ralph_desk.gui import fmt, icons, theme
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
from ralph_desk.gui.models.signals import describe
from ralph_desk.gui.widgets.bars import Segment, StackedBar
from ralph_desk.gui.widgets.card import CardFrame
from ralph_desk.gui.widgets.common import label
from ralph_desk.gui.widgets.flow import FlowLayout
from ralph_desk.gui.widgets.tables import record_table

TILE_ICON = 22
RECENT_SESSIONS = 8
WHEN_WIDTH = 120
SPEND_SESSIONS = 50
SPEND_ROWS = 8  # the spend table's height; more rows scroll


@dataclass(frozen=True)
class RecentSession:
    """One recent agent session, the title of its task, and the signals it sent."""

    session: AgentSession
    task_title: str
    signals: list[SignalRecord] = field(default_factory=list)


@dataclass(frozen=True)
class DashboardData:
    """Everything the dashboard shows."""

    totals: ProjectTotals
    recent: list[RecentSession] = field(default_factory=list)
    spend: list[HistoryRow] = field(default_factory=list)
    """The latest sessions (up to `SPEND_SESSIONS`) with their task titles, for the spend table."""
    first_checks: tuple[int, int] = (0, 0)
    """How many tasks passed their checks on their first checked done, and of how many checked."""


def _card(title: str) -> tuple[CardFrame, QVBoxLayout]:
    frame = CardFrame()
    layout = QVBoxLayout(frame)
    layout.setContentsMargins(16, 12, 16, 14)
    layout.setSpacing(10)
    layout.addWidget(label(title, name="subheading"))
    return frame, layout


def _per_hour(rate: Rate) -> str:
    per_hour = rate.per_hour
    if per_hour is None:
        return "—"
    digits = 0 if per_hour >= 10 else 1 if per_hour >= 1 else 2
    return f"{per_hour:.{digits}f} tasks / h"


def _clear(layout: QLayout) -> None:
    while layout.count():
        item = layout.takeAt(0)
        widget = item.widget() if item is not None else None
        if widget is not None:
            widget.deleteLater()


class Tile(CardFrame):
    """A figure with a caption; clicking it may lead somewhere."""

    sig_clicked = Signal()
    """The tile was clicked."""

    def __init__(self, icon_name: str, caption: str, tip: str = "", clickable: bool = False) -> None:
        super().__init__()
        self._icon_name = icon_name
        self._color: QColor | None = None
        self.icon = QLabel()
        self.caption = label(caption, name="muted")
        self.value = label("—", name="tileValue")
        self.note = label("", name="muted")
        top = QHBoxLayout()
        top.addWidget(self.icon)
        top.addWidget(self.caption, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 12)
        layout.setSpacing(2)
        layout.addLayout(top)
        layout.addWidget(self.value)
        layout.addWidget(self.note)
        self.setToolTip(tip)
        self.clickable = clickable
        if clickable:
            self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.refresh_style()

    def set_value(self, value: str, note: str = "", color: Any = None) -> None:
        """Show a figure and a note under it."""
        self.value.setText(value)
        self.note.setText(note)
        shown = color or theme.accent()
        if shown != self._color:  # a new pixmap lays the tile out again: only when its colour changed
            self._color = shown
            self.icon.setPixmap(icons.pixmap(self._icon_name, TILE_ICON, shown))

    def refresh_style(self) -> None:
        """Redraw the icon in the current palette."""
        self._color = theme.accent()
        self.icon.setPixmap(icons.pixmap(self._icon_name, TILE_ICON, self._color))

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        """Report a click."""
        if self.clickable and event.button() == Qt.MouseButton.LeftButton:
            self.sig_clicked.emit()
        super().mouseReleaseEvent(event)


class DashboardPane(QScrollArea):
    """How far the project is, what it cost, what waits, and what happened lately."""

    sig_open_inbox_requested = Signal(int)
    """Show the inbox tab with this index (0 questions, 1 suggestions, 2 flags)."""
    sig_open_task_requested = Signal(int)
    """Show the task with this id."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.viewport().setBackgroundRole(QPalette.ColorRole.Window)
        self.done = Tile("tasks", "Tasks done", "How many tasks are done, of all")
        self.cost = Tile("cost", "Cost to date", "What every agent session cost, in US dollars")
        self.questions = Tile("question", "Questions", "Open questions — click to answer", clickable=True)
        self.suggestions = Tile(
            "suggestion", "Suggestions", "Suggestions to review — click to see", clickable=True
        )
        self.flags = Tile("flag", "Open flags", "Flags to triage — click to see", clickable=True)
        for index, tile in enumerate((self.questions, self.suggestions, self.flags)):
            tile.sig_clicked.connect(lambda index=index: self.sig_open_inbox_requested.emit(index))
        tiles = QHBoxLayout()
        tiles.setSpacing(12)
        for tile in (self.done, self.cost, self.questions, self.suggestions, self.flags):
            tiles.addWidget(tile, 1)
        status_card, status_layout = _card("Progress by status")
        self.status_bar = StackedBar(height=18)
        self.legend = QWidget()
        self.legend_layout = FlowLayout(self.legend, spacing=14)
        self.legend_entries: dict[TaskStatus, QLabel] = {}
        status_layout.addWidget(self.status_bar)
        status_layout.addWidget(self.legend)
        figures = QHBoxLayout()
        figures.setSpacing(12)
        figures.addWidget(self._throughput_card(), 2)
        figures.addWidget(self._spend_card(), 5)
        feature_card, feature_layout = _card("Progress by feature")
        self.features = QWidget()
        self.features_grid = QGridLayout(self.features)
        self.features_grid.setContentsMargins(0, 0, 0, 0)
        self.features_grid.setHorizontalSpacing(14)
        self.features_grid.setVerticalSpacing(10)
        self.features_grid.setColumnStretch(1, 1)
        feature_layout.addWidget(self.features)
        recent_card, recent_layout = _card("Recent activity")
        self.recent = QTreeWidget()
        self.recent.setHeaderLabels(["When", "What", "Outcome", "Cost"])
        self.recent.setRootIsDecorated(True)
        self.recent.setAlternatingRowColors(True)
        self.recent.setIconSize(QSize(12, 12))
        self.recent.setMinimumHeight(280)
        header = self.recent.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.recent.headerItem().setTextAlignment(
            3, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        )
        for column, width in ((0, WHEN_WIDTH), (2, 130), (3, 80)):
            self.recent.setColumnWidth(column, width)
        self.recent.itemDoubleClicked.connect(self._open_item)
        self.recent.setToolTip(
            "The latest agent sessions and the signals they sent; double-click opens the task"
        )
        recent_layout.addWidget(self.recent)
        self.heading = label("Dashboard", name="heading")
        self.subtitle = label(name="muted")
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(20, 16, 20, 16)
        layout.setSpacing(14)
        layout.addWidget(self.heading)
        layout.addWidget(self.subtitle)
        layout.addLayout(tiles)
        layout.addWidget(status_card)
        layout.addLayout(figures)
        layout.addWidget(feature_card)
        layout.addWidget(recent_card, 1)
        self.setWidget(body)
        self.data: DashboardData | None = None

    def _throughput_card(self) -> CardFrame:
        card, layout = _card("Throughput")
        self.recent_rate = label("—", name="tileValue")
        self.recent_note = label(name="muted", wrap=True)
        self.overall_rate = label("—", name="tileValue")
        self.overall_note = label(name="muted", wrap=True)
        self.first_checks = label("—", name="tileValue")
        self.first_checks.setObjectName("firstTimePasses")
        self.first_checks_note = label(name="muted", wrap=True)
        self.first_checks_note.setToolTip(
            "Of the tasks whose done the desk checked (the project's checks, after a session's done), how "
            "many passed them the first time; the others came back to their agent with the failures"
        )
        for widget in (self.recent_rate, self.recent_note, self.overall_rate, self.overall_note):
            layout.addWidget(widget)
        layout.addSpacing(6)
        layout.addWidget(self.first_checks)
        layout.addWidget(self.first_checks_note)
        layout.addStretch(1)
        card.setToolTip(
            "Tasks the agents finished per hour: a task counts when a session of it ends done (merged "
            "or waiting for review). Over the last hours of agent work, and from the first session's "
            "start to the latest one's end (time between runs included)."
        )
        return card

    def _spend_card(self) -> CardFrame:
        card, layout = _card("Spend per session")
        self.spend_summary = label(name="muted", wrap=True)
        self.spend_model = HistoryTableModel(self)
        self.spend = record_table(self.spend_model, pills=(OUTCOME,))
        self.spend.setObjectName("spendPerSession")
        self.spend.setSortingEnabled(True)
        header = self.spend.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(TASK, QHeaderView.ResizeMode.Stretch)
        header.setSortIndicator(COST, Qt.SortOrder.DescendingOrder)
        for column in (VERB, TRANSCRIPT):
            self.spend.hideColumn(column)
        for column, width in ((STARTED, 96), (OUTCOME, 110), (TURNS, 50), (COST, 62), (DURATION, 80)):
            self.spend.setColumnWidth(column, width)
        rows = self.spend.verticalHeader().defaultSectionSize() * SPEND_ROWS
        self.spend.setFixedHeight(header.sizeHint().height() + rows + 2 * self.spend.frameWidth())
        self.spend.doubleClicked.connect(self._open_spent)
        self.spend.setToolTip("What each of the latest sessions cost; double-click opens its task")
        layout.addWidget(self.spend_summary)
        layout.addWidget(self.spend)
        return card

    def show_data(self, data: DashboardData) -> None:
        """Show the figures; the bars, legend and activity are rebuilt only when theirs changed."""
        previous, self.data = self.data, data
        tasks, sessions, counts = data.totals.tasks, data.totals.sessions, data.totals.inbox
        self.subtitle.setText(
            f"{fmt.plural(tasks.total, 'task')}, {tasks.percent_done:g}% done"
            if tasks.total
            else "No tasks yet: import a prd.json or let agents suggest tasks."
        )
        self.done.set_value(f"{tasks.done:,} / {tasks.total:,}", f"{tasks.percent_done:g}% done")
        self.cost.set_value(
            fmt.money(sessions.cost_usd),
            f"{fmt.plural(sessions.sessions, 'session')} · {sessions.turns:,} turns",
        )
        self.questions.set_value(str(counts.asks), "waiting for an answer")
        self.suggestions.set_value(str(counts.suggestions), "to approve or reject")
        self.flags.set_value(str(counts.flags), "to triage")
        if previous is None or previous.totals.tasks != tasks:
            self._show_status(tasks.by_status)
        if previous is None or previous.totals.by_feature != data.totals.by_feature:
            self._show_features(data.totals.by_feature)
        if previous is None or previous.recent != data.recent:
            self._show_recent(data.recent)
        self._show_throughput(data.totals.throughput)
        self._show_first_checks(*data.first_checks)
        self._show_spend(data.spend, sessions, data.totals.throughput.overall.tasks)

    def _show_throughput(self, throughput: Throughput) -> None:
        recent, overall = throughput.recent, throughput.overall
        self.recent_rate.setText(_per_hour(recent))
        span, tasks = fmt.span(recent.hours * 3600), fmt.plural(recent.tasks, "task")
        self.recent_note.setText(
            f"over the last {span} of agent work · {tasks}" if recent.hours else "no agent work yet"
        )
        self.overall_rate.setText(_per_hour(overall))
        self.overall_note.setText(
            f"overall · {fmt.plural(overall.tasks, 'task')} in {fmt.span(overall.hours * 3600)}"
            if overall.hours
            else ""
        )

    def _show_first_checks(self, passed: int, checked: int) -> None:
        self.first_checks.setVisible(checked > 0)
        self.first_checks.setText(f"{passed} of {checked}")
        self.first_checks_note.setText(
            f"{'task' if checked == 1 else 'tasks'} passed {'its' if checked == 1 else 'their'} checks on "
            f"the first done ({round(100 * passed / checked)}%)"
            if checked
            else "no checks yet: with checks configured, how often done passes them the first time"
        )

    def _show_spend(self, rows: list[HistoryRow], sessions: SessionTotals, finished: int) -> None:
        self.spend_model.set_items(rows)
        if not sessions.sessions:
            self.spend_summary.setText("No agent session has run yet.")
            return
        parts = [
            f"{fmt.plural(sessions.sessions, 'session')} · {fmt.money(sessions.cost_usd)}",
            f"{fmt.money(sessions.cost_usd / sessions.sessions)} a session on average",
        ]
        if finished:
            parts.append(f"{fmt.money(sessions.cost_usd / finished)} a finished task")
        shown = f"the latest {len(rows)} below" if len(rows) < sessions.sessions else "all below"
        self.spend_summary.setText(" · ".join(parts) + f" ({shown})")

    def _open_spent(self, index: QModelIndex) -> None:
        row = self.spend_model.record(index.row()) if index.isValid() else None
        if row is not None and row.session.task_id:
            self.sig_open_task_requested.emit(row.session.task_id)

    def _show_status(self, by_status: dict[str, int]) -> None:
        self.status_bar.set_segments(
            [
                Segment(theme.status_label(s), by_status.get(s.value, 0), theme.status_color(s))
                for s in TaskStatus
            ]
        )
        for status in TaskStatus:
            entry = self.legend_entries.get(status)
            if entry is None:
                entry = self.legend_entries[status] = QLabel()
                self.legend_layout.addWidget(entry)
            count = by_status.get(status.value, 0)
            dot = theme.status_color(status).name()
            entry.setText(f'<span style="color:{dot}">●</span> {theme.status_label(status)} <b>{count}</b>')
            entry.setEnabled(count > 0)

    def _show_features(self, by_feature: dict[str, StatusCounts]) -> None:
        _clear(self.features_grid)
        if not by_feature:
            self.features_grid.addWidget(label("No feature has tasks yet.", name="muted"), 0, 0)
            return
        for row, (name, counts) in enumerate(sorted(by_feature.items())):
            bar = StackedBar()
            bar.set_segments(
                [
                    Segment(theme.status_label(s), counts.by_status.get(s.value, 0), theme.status_color(s))
                    for s in TaskStatus
                ]
            )
            self.features_grid.addWidget(label(name), row, 0)
            self.features_grid.addWidget(bar, row, 1)
            done = label(f"{counts.done}/{counts.total} done", name="muted")
            done.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.features_grid.addWidget(done, row, 2)

    def _show_recent(self, recent: list[RecentSession]) -> None:
        self.recent.clear()
        if not recent:
            QTreeWidgetItem(self.recent, ["", "No agent session has run yet."])
            return
        for entry in recent:
            session = entry.session
            task = f"#{session.task_id} {entry.task_title}" if session.task_id else session.recipe
            parent = QTreeWidgetItem(
                self.recent,
                [
                    fmt.when(session.started_at),
                    task,
                    (session.outcome or "").replace("_", " "),
                    fmt.money(session.cost_usd),
                ],
            )
            parent.setIcon(2, icons.dot(theme.outcome_color(session.outcome)))
            parent.setToolTip(0, fmt.full(session.started_at))
            parent.setToolTip(1, f"Session {session.id}")
            parent.setData(0, Qt.ItemDataRole.UserRole, session.task_id or 0)
            parent.setTextAlignment(3, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            for signal in entry.signals:
                child = QTreeWidgetItem(
                    parent, [fmt.when(signal.created), fmt.one_line(describe(signal), 140), signal.verb.value]
                )
                child.setIcon(2, icons.dot(theme.verb_color(Verb(signal.verb))))
                child.setToolTip(0, fmt.full(signal.created))
                child.setToolTip(1, describe(signal))
                child.setData(0, Qt.ItemDataRole.UserRole, signal.task_id)
        self.recent.expandToDepth(0)
        # The times of a session's signals sit indented under it: the column takes what they need.
        self.recent.setColumnWidth(0, max(WHEN_WIDTH, self.recent.sizeHintForColumn(0)))

    def _open_item(self, item: QTreeWidgetItem, _column: int) -> None:
        task_id = int(item.data(0, Qt.ItemDataRole.UserRole) or 0)
        if task_id:
            self.sig_open_task_requested.emit(task_id)

    def refresh_style(self) -> None:
        """Redraw icons and colours in the current palette."""
        for tile in (self.done, self.cost, self.questions, self.suggestions, self.flags):
            tile.refresh_style()
        if self.data is not None:
            data, self.data = self.data, None
            self.show_data(data)
