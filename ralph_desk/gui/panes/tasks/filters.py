"""The filter bar above the task table: search text, status, feature, discipline, origin, priority."""

from __future__ import annotations

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLineEdit, QWidget

from ralph_desk.domain.enums import Priority, TaskOrigin, TaskStatus
from ralph_desk.gui import icons, theme
from ralph_desk.gui.models.tasks import TaskFilter
from ralph_desk.gui.widgets.common import ShrinkingComboBox, tool_button

ANY = "any"
OPEN = "open"
SEARCH_DELAY_MS = 120
SEARCH_MIN_WIDTH = 150
# "Open" work: everything not finished one way or another.
OPEN_STATUSES = frozenset(set(TaskStatus) - {TaskStatus.DONE, TaskStatus.SKIPPED})


def _combo(tip: str) -> QComboBox:
    combo = ShrinkingComboBox()
    combo.setToolTip(tip)
    return combo


class TaskFilterBar(QWidget):
    """Chooses what the task table shows; reports a `TaskFilter` when anything changes."""

    sig_filter_changed = Signal(object)
    """The filter (a `TaskFilter`) changed."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search titles, features, disciplines or #id")
        self.search.setClearButtonEnabled(True)
        self.search.setToolTip("Every word must match; #42 finds task 42 (Ctrl+F)")
        self.search.addAction(icons.icon("search", theme.muted()), QLineEdit.ActionPosition.LeadingPosition)
        self.search.setMinimumWidth(SEARCH_MIN_WIDTH)
        self.status = _combo("Show tasks in one status")
        self.status.addItem("Any status", ANY)
        self.status.addItem("Open (not done or skipped)", OPEN)
        for status in TaskStatus:
            self.status.addItem(
                icons.dot(theme.status_color(status)), theme.status_label(status), status.value
            )
        self.feature = _combo("Show the tasks of one feature")
        self.discipline = _combo("Show the tasks of one discipline")
        self.set_choices([], [])
        self.origin = _combo("Show tasks by who created them")
        self.origin.addItem("Any origin", ANY)
        for origin in TaskOrigin:
            shown = "agent (suggested)" if origin is TaskOrigin.AGENT else origin.value
            self.origin.addItem(shown, origin.value)
        self.priority = _combo("Show tasks of one priority")
        self.priority.addItem("Any priority", ANY)
        for priority in reversed(list(Priority)):
            self.priority.addItem(priority.value, priority.value)
        self.clear = tool_button("close", "Clear every filter")
        self.clear.clicked.connect(self.clear_filters)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)
        layout.addWidget(self.search, 2)
        for combo in self.combos:
            layout.addWidget(combo)
            combo.currentIndexChanged.connect(self._emit)
        layout.addWidget(self.clear)
        layout.addStretch(1)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(SEARCH_DELAY_MS)
        self._debounce.timeout.connect(self._emit)
        self.search.textChanged.connect(lambda _: self._debounce.start())

    @property
    def combos(self) -> tuple[QComboBox, ...]:
        """The choice boxes, left to right."""
        return (self.status, self.feature, self.discipline, self.origin, self.priority)

    def set_choices(self, features: list[str], disciplines: list[str]) -> None:
        """Offer these features and disciplines (a current choice is kept when it still exists)."""
        for combo, names, any_text in (
            (self.feature, features, "Any feature"),
            (self.discipline, disciplines, "Any discipline"),
        ):
            current = combo.currentData()
            combo.blockSignals(True)
            combo.clear()
            combo.addItem(any_text, ANY)
            for name in names:
                combo.addItem(name, name)
            combo.setCurrentIndex(max(0, combo.findData(current)))
            combo.blockSignals(False)

    def task_filter(self) -> TaskFilter:
        """The filter chosen."""
        status = self.status.currentData()
        statuses: frozenset[TaskStatus] | None = None
        if status == OPEN:
            statuses = OPEN_STATUSES
        elif status not in (None, ANY):
            statuses = frozenset({TaskStatus(status)})
        return TaskFilter(
            statuses=statuses,
            feature=self._value(self.feature),
            discipline=self._value(self.discipline),
            origin=TaskOrigin(origin) if (origin := self._value(self.origin)) else None,
            priority=Priority(priority) if (priority := self._value(self.priority)) else None,
            text=self.search.text().strip(),
        )

    def choose(self, combo: QComboBox, value: str | None) -> None:
        """Select `value` (None: any) in one of the boxes."""
        combo.setCurrentIndex(max(0, combo.findData(ANY if value is None else value)))

    def clear_filters(self) -> None:
        """Show every task."""
        for combo in self.combos:
            combo.blockSignals(True)
            combo.setCurrentIndex(0)
            combo.blockSignals(False)
        self.search.blockSignals(True)
        self.search.clear()
        self.search.blockSignals(False)
        self._emit()

    def _value(self, combo: QComboBox) -> str | None:
        data = combo.currentData()
        return None if data in (None, ANY) else str(data)

    def _emit(self) -> None:
        self._debounce.stop()
        self.sig_filter_changed.emit(self.task_filter())
