"""The Dashboard pane's wiring: reads the project's figures and recent sessions when they change."""

from __future__ import annotations

from dataclasses import dataclass

from ralph_desk.domain.records import AgentSession, Change
from ralph_desk.domain.records import Signal as SignalRecord
from ralph_desk.domain.totals import ProjectTotals
from ralph_desk.gui.backend import FirstTimePasses, Services
from ralph_desk.gui.directory import TaskDirectory
from ralph_desk.gui.models.history import HistoryRow
from ralph_desk.gui.pacer import ReadPacer
from ralph_desk.gui.panes.dashboard.pane import (
    RECENT_SESSIONS,
    SPEND_SESSIONS,
    DashboardData,
    DashboardPane,
    RecentSession,
)
from ralph_desk.gui.worker import Worker

READ_SPACING_MS = 1000
"""A person reads the figures, not each change: at most one read a second while a loop runs."""


@dataclass(frozen=True)
class _Read:
    """What one read of the dashboard brings back from the worker."""

    totals: ProjectTotals
    recent: list[tuple[AgentSession, list[SignalRecord]]]
    spend: list[AgentSession]
    first_checks: FirstTimePasses


class DashboardWiring:
    """Re-reads the dashboard when tasks, sessions or the inbox change — only while it is shown."""

    topics = frozenset({"tasks", "sessions", "inbox", "signals", "loop", "checks"})

    def __init__(
        self, pane: DashboardPane, services: Services, worker: Worker, directory: TaskDirectory
    ) -> None:
        self.pane = pane
        self.services = services
        self.worker = worker
        self.directory = directory
        self.stale = True
        """Something changed since the last read (read when shown)."""
        self.visible = False
        self.reads = ReadPacer(worker, self._start_read, READ_SPACING_MS)

    @property
    def reading(self) -> bool:
        """Whether a read is under way or due."""
        return self.reads.waiting

    def set_visible(self, visible: bool) -> None:
        """The pane was shown or hidden; a stale pane is read when shown."""
        self.visible = visible
        if visible and self.stale:
            self.refresh(now=True)  # a person opened the pane

    def on_changes(self, changes: list[Change]) -> None:
        """Note that the figures are stale; read them now if the pane is shown."""
        if {change.topic for change in changes} & self.topics:
            self.stale = True
            if self.visible:
                self.refresh()

    def refresh(self, now: bool = False) -> None:
        """Read every figure on the worker (one read at a time, at most one a second unless `now`)."""
        self.reads.request(now)

    def _start_read(self) -> None:
        self.stale = False
        self.worker.submit("read the dashboard", self._read, self.reads.then(self._show), self._read_failed)

    def _read_failed(self) -> None:
        self.stale = True
        self.reads.finished()

    def _read(self) -> _Read:
        services = self.services
        sessions = services.sessions.list(limit=SPEND_SESSIONS)
        recent: list[tuple[AgentSession, list[SignalRecord]]] = [
            (session, services.signals.for_session(session.id)) for session in sessions[:RECENT_SESSIONS]
        ]
        return _Read(services.progress.totals(), recent, sessions, services.checks.first_time_passes())

    def _title(self, task_id: int | None) -> str:
        return self.directory.title(task_id) if task_id else ""

    def _show(self, read: _Read) -> None:
        recent = [
            RecentSession(session, self._title(session.task_id), signals) for session, signals in read.recent
        ]
        spend = [HistoryRow(session, self._title(session.task_id)) for session in read.spend]
        first = read.first_checks
        self.pane.show_data(DashboardData(read.totals, recent, spend, (first.passed, first.checked)))
