"""The detail of one task: its fields, dependencies, comments, signal timeline and sessions."""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QSpinBox,
    QSplitter,
    QStackedWidget,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ralph_desk.domain.enums import TaskOrigin
from ralph_desk.domain.records import AgentSession, Task, TaskSummary
from ralph_desk.domain.records import Signal as SignalRecord
from ralph_desk.gui import fmt, icons, theme
from ralph_desk.gui.models.base import RECORD_ROLE
from ralph_desk.gui.models.sessions import SessionTableModel
from ralph_desk.gui.models.signals import SignalTimelineModel, describe_long, session_numbers
from ralph_desk.gui.panes.tasks.comments import CommentsView
from ralph_desk.gui.panes.tasks.fields import TaskFields
from ralph_desk.gui.widgets.common import button, label
from ralph_desk.gui.widgets.empty_state import EmptyState
from ralph_desk.gui.widgets.pill import Pill
from ralph_desk.gui.widgets.tables import record_table

FIELDS, DEPENDENCIES, COMMENTS, ACTIVITY = range(4)
MAX_TASK_ID = 2**31 - 1


@dataclass(frozen=True)
class TaskDetailData:
    """Everything the detail view shows of one task."""

    task: Task
    dependencies: list[TaskSummary]
    dependents: list[TaskSummary]
    signals: list[SignalRecord] = field(default_factory=list)
    sessions: list[AgentSession] = field(default_factory=list)


def _table(model: SignalTimelineModel | SessionTableModel, pill_columns: tuple[int, ...]) -> QTableView:
    table = record_table(model, pills=pill_columns)
    table.horizontalHeader().setStretchLastSection(True)
    table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    return table


class TaskDetail(QStackedWidget):
    """One task in tabs; every change is asked for through a signal."""

    sig_save_requested = Signal(int, object)
    """Save these field changes (a dict) to the task with this id."""
    sig_add_dependency_requested = Signal(int, int)
    """Make the first task wait for the second."""
    sig_remove_dependency_requested = Signal(int, int)
    """Stop the first task waiting for the second."""
    sig_add_comment_requested = Signal(int, str)
    """Add a comment to the task."""
    sig_edit_comment_requested = Signal(int, int, str)
    """Replace the text of a comment (task id, comment id, text)."""
    sig_delete_comment_requested = Signal(int, int)
    """Delete a comment (task id, comment id)."""
    sig_open_transcript_requested = Signal(str)
    """Open a session transcript (a path relative to the project)."""
    sig_open_task_requested = Signal(int)
    """Show another task."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.data: TaskDetailData | None = None
        self.empty = EmptyState(
            "tasks",
            "No task selected",
            "Select a task in the table to read and edit it, its comments, "
            "the signals of its sessions and what they cost.",
        )
        self.fields = TaskFields()
        self.comments = CommentsView()
        self.session_numbers: dict[str, int] = {}
        self.timeline_model = SignalTimelineModel(self.session_numbers, self)
        self.sessions_model = SessionTableModel(self.session_numbers, self)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.setUsesScrollButtons(False)
        self.tabs.setElideMode(Qt.TextElideMode.ElideRight)
        self.tabs.addTab(self.fields, "Details")
        self.tabs.addTab(self._build_dependencies(), "Depends on")
        self.tabs.addTab(self.comments, "Comments")
        self.tabs.addTab(self._build_activity(), "Activity")
        self.tabs.setTabToolTip(FIELDS, "Every field of the task, editable")
        self.tabs.setTabToolTip(DEPENDENCIES, "The tasks this one waits for, and those waiting for it")
        self.tabs.setTabToolTip(COMMENTS, "Notes on the task")
        self.tabs.setTabToolTip(
            ACTIVITY,
            "The agent sessions that worked on it (cost, outcome, transcript) and every signal they sent",
        )
        self.heading = label(name="heading", wrap=True, selectable=True)
        self.status = Pill()
        self.priority = Pill()
        self.origin = QLabel()
        pills = QHBoxLayout()
        pills.setSpacing(6)
        pills.addWidget(self.status)
        pills.addWidget(self.priority)
        pills.addWidget(self.origin)
        pills.addStretch(1)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(12, 4, 4, 4)
        layout.setSpacing(6)
        layout.addWidget(self.heading)
        layout.addLayout(pills)
        layout.addWidget(self.tabs, 1)
        self.page = page
        self.addWidget(self.empty)
        self.addWidget(page)
        self._connect()

    def _connect(self) -> None:
        self.fields.sig_save_requested.connect(self.sig_save_requested)
        self.comments.sig_add_requested.connect(
            lambda text: self.sig_add_comment_requested.emit(self._task_id(), text)
        )
        self.comments.sig_edit_requested.connect(
            lambda comment_id, text: self.sig_edit_comment_requested.emit(self._task_id(), comment_id, text)
        )
        self.comments.sig_delete_requested.connect(
            lambda comment_id: self.sig_delete_comment_requested.emit(self._task_id(), comment_id)
        )

    # --- building -----------------------------------------------------------------------------

    def _build_dependencies(self) -> QWidget:
        self.dependencies = QListWidget()
        self.dependencies.setToolTip("Tasks this one waits for; double-click to open one")
        self.dependencies.itemDoubleClicked.connect(self._open_item)
        self.dependents = QListWidget()
        self.dependents.setToolTip("Tasks that wait for this one; double-click to open one")
        self.dependents.itemDoubleClicked.connect(self._open_item)
        self.dependency_id = QSpinBox()
        self.dependency_id.setRange(1, MAX_TASK_ID)
        self.dependency_id.setPrefix("#")
        self.dependency_id.setToolTip("The id of the task this one should wait for")
        self.add_dependency = button("Add dependency", "add", "Make this task wait for that one")
        self.add_dependency.clicked.connect(
            lambda: self.sig_add_dependency_requested.emit(self._task_id(), self.dependency_id.value())
        )
        self.remove_dependency = button("Remove", "remove", "Stop waiting for the selected task")
        self.remove_dependency.clicked.connect(self._remove_selected_dependency)
        self.dependencies.currentItemChanged.connect(
            lambda current, _previous: self.remove_dependency.setEnabled(current is not None)
        )
        waits_row = QHBoxLayout()
        waits_row.addWidget(label("Waits for", name="subheading"), 1)
        waits_row.addWidget(self.remove_dependency)
        add_row = QHBoxLayout()
        add_row.addWidget(label("Wait for task"))
        add_row.addWidget(self.dependency_id)
        add_row.addWidget(self.add_dependency)
        add_row.addStretch(1)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addLayout(waits_row)
        layout.addWidget(self.dependencies, 2)
        layout.addLayout(add_row)
        layout.addWidget(label("Waited for by", name="subheading"))
        layout.addWidget(self.dependents, 1)
        return page

    def _build_activity(self) -> QWidget:
        self.sessions = _table(self.sessions_model, (4,))
        # Recipe, agent, turns, duration: in tooltips; the transcript: a button below. The pane is narrow.
        for column in (2, 3, 6, 8, 9):
            self.sessions.setColumnHidden(column, True)
        for column, width in ((0, 30), (1, 96), (4, 114), (5, 76), (7, 56)):
            self.sessions.setColumnWidth(column, width)
        self.sessions.doubleClicked.connect(self._open_transcript_at)
        self.open_transcript = button(
            "Show transcript", "transcript", "Show the selected session's stream again in the Loop pane"
        )
        self.open_transcript.clicked.connect(lambda: self._open_transcript_at(self.sessions.currentIndex()))
        self.sessions_summary = label(name="muted")
        row = QHBoxLayout()
        row.addWidget(self.sessions_summary, 1)
        row.addWidget(self.open_transcript)
        sessions = QWidget()
        sessions_layout = QVBoxLayout(sessions)
        sessions_layout.setContentsMargins(0, 0, 0, 4)
        sessions_layout.addWidget(label("Sessions", name="subheading"))
        sessions_layout.addWidget(self.sessions, 1)
        sessions_layout.addLayout(row)
        self.timeline = _table(self.timeline_model, (2,))
        for column, width in ((0, 96), (1, 64), (2, 84)):
            self.timeline.setColumnWidth(column, width)
        self.timeline.selectionModel().currentRowChanged.connect(self._show_signal)
        self.signal_text = QPlainTextEdit()
        self.signal_text.setReadOnly(True)
        self.signal_text.setPlaceholderText("Select a signal to read all it says")
        signals = QWidget()
        signals_layout = QVBoxLayout(signals)
        signals_layout.setContentsMargins(0, 4, 0, 0)
        signals_layout.addWidget(label("Signals", name="subheading"))
        signals_layout.addWidget(self.timeline, 1)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(sessions)
        splitter.addWidget(signals)
        splitter.addWidget(self.signal_text)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 3)
        splitter.setStretchFactor(2, 1)
        splitter.setChildrenCollapsible(False)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(splitter)
        self.activity_empty = EmptyState(
            "timeline",
            "No agent has worked on it yet",
            "Each session on this task appears here with its cost and transcript, and each verb it "
            "called (done, partial, ask, flag…) in order.",
        )
        self.activity = QStackedWidget()
        self.activity.addWidget(page)
        self.activity.addWidget(self.activity_empty)
        return self.activity

    # --- showing ------------------------------------------------------------------------------

    def show_task(self, data: TaskDetailData | None) -> None:
        """Show a task (None: the empty state); edits in progress on the same task are kept."""
        self.data = data
        if data is None:
            self.setCurrentWidget(self.empty)
            return
        task = data.task
        self.setCurrentWidget(self.page)
        self.heading.setText(f"#{task.id}  {task.title}")
        self.status.set_pill(theme.status_label(task.status), theme.status_color(task.status))
        self.status.setToolTip("Status")
        self.priority.set_pill(f"{task.priority.value} priority", theme.priority_color(task.priority))
        agent = task.origin is TaskOrigin.AGENT
        self.origin.setPixmap(
            icons.pixmap("robot", 20, theme.origin_color(task.origin)) if agent else QPixmap()
        )
        self.origin.setToolTip("Suggested by an agent" if agent else "")
        self.fields.load(task)
        self._show_dependencies(data)
        self.comments.show_comments(list(task.comments))
        self._show_activity(data)
        self.tabs.setTabText(COMMENTS, f"Comments ({len(task.comments)})" if task.comments else "Comments")
        sessions = len(data.sessions)
        self.tabs.setTabText(ACTIVITY, f"Activity ({sessions})" if sessions else "Activity")
        deps = len(task.depends_on)
        self.tabs.setTabText(DEPENDENCIES, f"Depends on ({deps})" if deps else "Depends on")
        # The splitter may squeeze the detail no narrower than its tabs: their titles are never cut.
        self.tabs.setMinimumWidth(self.tabs.tabBar().sizeHint().width())

    def _show_dependencies(self, data: TaskDetailData) -> None:
        for widget, summaries in ((self.dependencies, data.dependencies), (self.dependents, data.dependents)):
            selected = widget.currentItem().data(Qt.ItemDataRole.UserRole) if widget.currentItem() else None
            widget.clear()
            for summary in summaries:
                item = QListWidgetItem(
                    icons.dot(theme.status_color(summary.status)),
                    f"#{summary.id}  {summary.title}  — {theme.status_label(summary.status)}",
                )
                item.setData(Qt.ItemDataRole.UserRole, summary.id)
                widget.addItem(item)
                if summary.id == selected:
                    widget.setCurrentItem(item)
        self.remove_dependency.setEnabled(self.dependencies.currentItem() is not None)

    def _show_activity(self, data: TaskDetailData) -> None:
        started = sorted(data.sessions, key=lambda session: session.started_at)
        numbers = session_numbers(
            [*(session.id for session in started), *(s.session_id for s in data.signals)]
        )
        renumbered = numbers != self.session_numbers
        self.session_numbers.clear()
        self.session_numbers.update(numbers)
        self.timeline_model.set_items(data.signals)
        self.sessions_model.set_items(data.sessions)
        if renumbered:
            self.timeline_model.refresh_all()
            self.sessions_model.refresh_all()
        self.activity.setCurrentIndex(0 if data.signals or data.sessions else 1)
        self._show_sessions_summary(data.sessions)

    def _show_sessions_summary(self, sessions: list[AgentSession]) -> None:
        if not sessions:
            self.sessions_summary.setText("No agent session has worked on this task yet.")
        else:
            cost = sum(session.cost_usd for session in sessions)
            turns = sum(session.turns for session in sessions)
            self.sessions_summary.setText(
                f"{fmt.plural(len(sessions), 'session')} · {turns} turns · {fmt.money(cost)} in all"
            )
        self.open_transcript.setEnabled(any(session.transcript_path for session in sessions))

    def _show_signal(self, current: QModelIndex, _previous: QModelIndex) -> None:
        record = current.data(RECORD_ROLE) if current.isValid() else None
        self.signal_text.setPlainText(describe_long(record) if isinstance(record, SignalRecord) else "")

    # --- requests -----------------------------------------------------------------------------

    def _task_id(self) -> int:
        return self.data.task.id if self.data is not None else 0

    def _open_item(self, item: QListWidgetItem) -> None:
        self.sig_open_task_requested.emit(int(item.data(Qt.ItemDataRole.UserRole)))

    def _remove_selected_dependency(self) -> None:
        item = self.dependencies.currentItem()
        if item is not None and self.data is not None:
            self.sig_remove_dependency_requested.emit(
                self.data.task.id, int(item.data(Qt.ItemDataRole.UserRole))
            )

    def _open_transcript_at(self, index: QModelIndex) -> None:
        """Open the transcript of the session at `index` (none selected: the newest that has one)."""
        record = index.data(RECORD_ROLE) if index.isValid() else None
        candidates = [record] if isinstance(record, AgentSession) else self.sessions_model.items
        path = next((session.transcript_path for session in candidates if session.transcript_path), None)
        if path:
            self.sig_open_transcript_requested.emit(path)
