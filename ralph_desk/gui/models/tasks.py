"""The task table: a model over a plain list of task summaries, and the proxy that filters it."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QSortFilterProxyModel, Qt

from ralph_desk.domain.enums import Priority, TaskOrigin, TaskStatus
from ralph_desk.domain.records import TaskSummary
from ralph_desk.gui import fmt, icons, theme
from ralph_desk.gui.models.base import Column, RecordTableModel

ID, TITLE, STATUS, PRIORITY, FEATURE, DISCIPLINE, ORIGIN = range(7)


def _origin_icon(task: TaskSummary) -> Any:
    return icons.icon("robot", theme.origin_color(task.origin)) if task.origin is TaskOrigin.AGENT else None


def _origin_tip(task: TaskSummary) -> str:
    if task.origin is TaskOrigin.AGENT:
        return "Suggested by an agent"
    if task.origin is TaskOrigin.IMPORT:
        return "Imported (prd.json)"
    return "Created by a person"


TASK_COLUMNS: list[Column[TaskSummary]] = [
    Column("ID", lambda t: f"#{t.id}", sort_key=lambda t: t.id, align_right=True),
    Column(
        "Title",
        lambda t: t.title,
        sort_key=lambda t: t.title.casefold(),
        tooltip=lambda t: f"{t.title}\nupdated {fmt.full(t.updated_at)}",
    ),
    Column(
        "Status",
        lambda t: theme.status_label(t.status),
        sort_key=lambda t: theme.STATUS_ORDER[t.status],
        color=lambda t: theme.status_color(t.status),
        header_tip="draft → pending → in progress → done; or blocked, needs input, skipped, failed",
    ),
    Column(
        "Priority",
        lambda t: t.priority.value,
        sort_key=lambda t: -t.priority.rank,
        color=lambda t: theme.priority_color(t.priority),
    ),
    Column("Feature", lambda t: t.feature, sort_key=lambda t: t.feature),
    Column("Discipline", lambda t: t.discipline, sort_key=lambda t: t.discipline),
    Column(
        "Origin",
        lambda t: "" if t.origin is TaskOrigin.HUMAN else t.origin.value,
        sort_key=lambda t: t.origin.value,
        icon=_origin_icon,
        tooltip=_origin_tip,
        header_tip="Who created the task; the robot marks agent-suggested tasks",
    ),
]


class TaskTableModel(RecordTableModel[TaskSummary]):
    """Task summaries as rows: id, title, status, priority, feature, discipline, origin."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(TASK_COLUMNS, key=lambda task: task.id, parent=parent)


@dataclass(frozen=True)
class TaskFilter:
    """What the task table shows: each field narrows it; None or empty means any."""

    statuses: frozenset[TaskStatus] | None = None
    feature: str | None = None
    discipline: str | None = None
    origin: TaskOrigin | None = None
    priority: Priority | None = None
    text: str = ""

    @property
    def is_empty(self) -> bool:
        """Whether nothing is filtered out."""
        return self == TaskFilter()

    def accepts(self, task: TaskSummary) -> bool:
        """Whether `task` passes every filter."""
        if self.statuses is not None and task.status not in self.statuses:
            return False
        if self.feature is not None and task.feature != self.feature:
            return False
        if self.discipline is not None and task.discipline != self.discipline:
            return False
        if self.origin is not None and task.origin is not self.origin:
            return False
        if self.priority is not None and task.priority is not self.priority:
            return False
        return not self.text or self._matches(task)

    def _matches(self, task: TaskSummary) -> bool:
        needle = self.text.casefold().strip()
        if needle.startswith("#") and needle[1:].isdigit():
            return str(task.id) == needle[1:]
        haystack = f"#{task.id} {task.title} {task.feature} {task.discipline}".casefold()
        return all(word in haystack for word in needle.split())

    def with_text(self, text: str) -> TaskFilter:
        """The same filter with another search text."""
        return replace(self, text=text)


class TaskFilterProxy(QSortFilterProxyModel):
    """Filters the task model by a `TaskFilter`; sorting is left to the source, which sorts its list."""

    def __init__(self, source: TaskTableModel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._source = source
        self.filter = TaskFilter()
        self.setSourceModel(source)

    def set_filter(self, task_filter: TaskFilter) -> None:
        """Show only the tasks `task_filter` accepts."""
        if task_filter == self.filter:
            return
        self.beginFilterChange()
        self.filter = task_filter
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)

    def filterAcceptsRow(self, source_row: int, source_parent: QModelIndex | QPersistentModelIndex) -> bool:
        """Whether the task in `source_row` passes the filter."""
        if source_parent.isValid():
            return False
        return self.filter.accepts(self._source.record(source_row))

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort the source's list (one Python sort, not a comparison callback per pair)."""
        self._source.sort(column, order)
