"""The sessions a loop runs now, as rows: task, agent, elapsed time, turns and cost so far."""

from __future__ import annotations

from datetime import UTC, datetime

from PySide6.QtCore import QObject

from ralph_desk.gui import fmt
from ralph_desk.gui.models.base import Column, RecordTableModel
from ralph_desk.gui.panes.loop.running import RunningRow


def elapsed(row: RunningRow) -> str:
    """How long the session has run, as of now."""
    return fmt.duration(row.started, datetime.now(UTC))


TASK, AGENT, ELAPSED, TURNS, COST = range(5)

RUNNING_COLUMNS: list[Column[RunningRow]] = [
    Column(
        "Task", lambda r: r.title, tooltip=lambda r: f"{r.title}\n{r.session_id}\n{r.state}: {r.last_action}"
    ),
    Column("Agent", lambda r: r.agent),
    Column(
        "Elapsed",
        elapsed,
        sort_key=lambda r: r.started,
        align_right=True,
        tooltip=lambda r: f"started {fmt.full(r.started)}",
    ),
    Column("Turns", lambda r: str(r.turns), sort_key=lambda r: r.turns, align_right=True),
    Column(
        "Cost",
        lambda r: fmt.money(r.cost_usd),
        sort_key=lambda r: r.cost_usd,
        align_right=True,
        header_tip="What the session cost so far, as its agent reports it",
    ),
]


class RunningTableModel(RecordTableModel[RunningRow]):
    """The running sessions, oldest first; the elapsed column reads anew on every `tick`."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(RUNNING_COLUMNS, key=lambda row: row.session_id, parent=parent)

    def tick(self) -> None:
        """The clock moved on: the elapsed times read differently."""
        if self.rowCount():
            self.dataChanged.emit(self.index(0, ELAPSED), self.index(self.rowCount() - 1, ELAPSED))
