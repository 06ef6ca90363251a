"""The live stream of the current agent session: a list model over plain lines made from loop events."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase

from ralph_desk.domain.enums import Severity, TaskStatus
from ralph_desk.gui import fmt, icons, theme
from ralph_desk.loop.model import EventKind, LiveEvent

Index = QModelIndex | QPersistentModelIndex
_ROOT = QModelIndex()

MAX_LINES = 5000
SHOWN_CHARS = 600

KIND_ROLE = Qt.ItemDataRole.UserRole + 30
"""The role that gives a line's event kind."""

# The icon of each kind of line; the colour comes from `_color`.
KIND_ICONS: dict[EventKind, str] = {
    EventKind.SESSION_STARTED: "session",
    EventKind.INIT: "info",
    EventKind.ASSISTANT_TEXT: "message",
    EventKind.TOOL_CALL: "tool",
    EventKind.TOOL_RESULT: "result",
    EventKind.COST: "cost",
    EventKind.RETRY: "warning",
    EventKind.RATE_LIMIT: "warning",
    EventKind.PERMISSION_DENIED: "error",
    EventKind.RESULT: "result",
    EventKind.ERROR: "error",
    EventKind.STDERR: "info",
    EventKind.SESSION_ENDED: "session",
    EventKind.LOOP_STATE: "loop",
    EventKind.CHECK_STARTED: "tool",
    EventKind.CHECK_ENDED: "result",
}
MONOSPACED = frozenset({EventKind.TOOL_CALL, EventKind.TOOL_RESULT, EventKind.STDERR})
BOLD = frozenset({EventKind.SESSION_STARTED, EventKind.SESSION_ENDED})


@dataclass(frozen=True)
class StreamLine:
    """One line of the live view: what kind, what it says, the whole of it, and when."""

    kind: EventKind
    text: str
    detail: str
    at: datetime | None = None
    error: bool = False
    outcome: str | None = None
    """How the session ended (session-ended lines only), as the history names it."""


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) if value else ""


def _session_end(event: LiveEvent) -> str:
    data = event.data
    verb = data.get("closing_verb")
    code = data.get("exit_code")
    crashed = f"the agent exited with code {code}" if data.get("crashed") else ""
    closed = f"closed with {verb}" if verb else crashed or "no closing verb"
    parts = [f"Session ended: {event.text.replace('_', ' ')} ({closed})"]
    if data.get("turns"):
        parts.append(fmt.plural(int(data["turns"]), "turn"))
    if data.get("cost_usd") is not None:
        parts.append(fmt.money(float(data["cost_usd"])))
    return " · ".join(parts)


def line_of(event: LiveEvent) -> StreamLine:
    """The line that shows a loop event."""
    data = event.data
    kind = event.kind
    text = event.text
    detail = text
    error = kind in (EventKind.ERROR, EventKind.PERMISSION_DENIED)
    if kind is EventKind.SESSION_STARTED:
        task = f"task #{data['task_id']}: " if data.get("task_id") else ""
        text = f"Session started — {task}{event.text}"
        detail = f"{event.session_id or ''}\n{str(data.get('recipe', '')).replace('_', ' ')}".strip()
    elif kind is EventKind.TOOL_CALL:
        detail = f"{data.get('name', '')}\n{_pretty(data.get('input'))}".strip()
    elif kind is EventKind.TOOL_RESULT:
        error = bool(data.get("is_error"))
        detail = str(data.get("content") or text)
    elif kind is EventKind.SESSION_ENDED:
        text = _session_end(event)
    elif kind is EventKind.LOOP_STATE:
        reason = data.get("reason")
        text = f"Loop {event.text.replace('_', ' ')}" + (f": {reason}" if reason else "")
    elif kind is EventKind.CHECK_STARTED:
        names = ", ".join(str(name) for name in data.get("checks") or ())
        text = f"Running the checks after done: {names}" if names else "Running the checks after done"
    elif kind is EventKind.CHECK_ENDED:
        passed = bool(data.get("passed"))
        error = not passed
        text = f"Checks {'passed' if passed else 'failed'} — {text.removeprefix('checks: ')}"
    elif kind is EventKind.RESULT:
        error = bool(data.get("is_error"))
        # The agent's process ending says nothing of the task; the session-ended line gives the outcome.
        text = f"Agent process {text}"
    outcome = event.text if kind is EventKind.SESSION_ENDED else None
    shown = fmt.one_line(text, SHOWN_CHARS) if kind in MONOSPACED else text
    return StreamLine(kind, shown, detail, event.at, error, outcome)


def _color(line: StreamLine) -> QColor | None:
    if line.error:
        return theme.status_color(TaskStatus.FAILED)
    kind = line.kind
    if kind is EventKind.TOOL_CALL:
        return theme.accent()
    if kind is EventKind.CHECK_ENDED:
        return theme.status_color(TaskStatus.DONE)
    if kind is EventKind.CHECK_STARTED:
        return theme.status_color(TaskStatus.IN_PROGRESS)
    if kind in (EventKind.TOOL_RESULT, EventKind.INIT, EventKind.STDERR, EventKind.LOOP_STATE):
        return theme.muted()
    if kind in (EventKind.COST, EventKind.RESULT):
        return theme.muted()
    if kind is EventKind.SESSION_ENDED:
        return theme.outcome_color(line.outcome)
    if kind in (EventKind.RETRY, EventKind.RATE_LIMIT):
        return theme.severity_color(Severity.WARNING)
    if kind in BOLD:
        return theme.status_color(TaskStatus.IN_PROGRESS)
    return None


class StreamModel(QAbstractListModel):
    """The lines of the live view, oldest first; the oldest go once there are `MAX_LINES`."""

    def __init__(self, limit: int = MAX_LINES, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.limit = limit
        self.lines: list[StreamLine] = []
        self._fixed = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)

    def rowCount(self, parent: Index = _ROOT) -> int:
        """How many lines."""
        return 0 if parent.isValid() else len(self.lines)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        """A line's text, icon, colour, font, tooltip or kind."""
        return self._value(index, role)

    def _value(self, index: Index, role: int) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.lines):
            return None
        line = self.lines[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return line.text
        if role == Qt.ItemDataRole.DecorationRole:
            return icons.icon(KIND_ICONS.get(line.kind, "info"), _color(line))
        if role == Qt.ItemDataRole.ForegroundRole:
            return _color(line)
        if role == Qt.ItemDataRole.FontRole:
            return self._font(line)
        if role == Qt.ItemDataRole.ToolTipRole:
            stamp = fmt.full(line.at) if line.at else ""
            return f"{stamp}\n{line.detail}".strip() or None
        if role == KIND_ROLE:
            return line.kind.value
        return None

    def _font(self, line: StreamLine) -> QFont | None:
        if line.kind in MONOSPACED:
            return self._fixed
        if line.kind in BOLD:
            font = QFont()
            font.setBold(True)
            return font
        return None

    def append(self, line: StreamLine) -> None:
        """Add a line at the end (dropping the oldest beyond the limit)."""
        self.extend((line,))

    def extend(self, lines: Sequence[StreamLine]) -> None:
        """Add lines at the end in one insertion (views lay out once); the oldest go beyond the limit."""
        added = list(lines)[-self.limit :]
        if not added:
            return
        extra = len(self.lines) + len(added) - self.limit
        if extra > 0:
            self.beginRemoveRows(_ROOT, 0, extra - 1)
            del self.lines[:extra]
            self.endRemoveRows()
        row = len(self.lines)
        self.beginInsertRows(_ROOT, row, row + len(added) - 1)
        self.lines.extend(added)
        self.endInsertRows()

    def set_lines(self, lines: Sequence[StreamLine]) -> None:
        """Show exactly these lines (the newest `limit` of them)."""
        self.beginResetModel()
        self.lines = list(lines)[-self.limit :] if lines else []
        self.endResetModel()

    def clear(self) -> None:
        """Drop every line."""
        if self.lines:
            self.beginRemoveRows(_ROOT, 0, len(self.lines) - 1)
            self.lines.clear()
            self.endRemoveRows()

    def refresh_all(self) -> None:
        """Tell views every line may read differently (after the palette changed)."""
        if self.lines:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self.lines) - 1, 0))
