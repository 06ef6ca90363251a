"""The Dashboard pane's wiring: reads progress, cost, counts and recent sessions when they change."""

from __future__ import annotations

from ralph_desk.domain.records import Change
from ralph_desk.gui.actions import ActionRunner
from ralph_desk.gui.directory import TaskDirectory
from ralph_desk.gui.panes.dashboard.pane import RECENT_SESSIONS, DashboardData, DashboardPane, RecentSession
from ralph_desk.services.container import Services

MAX_SESSIONS_COUNTED = 1000


class DashboardWiring:
    """Re-reads the dashboard when tasks, sessions or the inbox change — only while it is shown."""

    topics = frozenset({"tasks", "sessions", "inbox", "signals", "loop"})

    def __init__(
        self, pane: DashboardPane, services: Services, runner: ActionRunner, directory: TaskDirectory
    ) -> None:
        self.pane = pane
        self.services = services
        self.runner = runner
        self.directory = directory
        self.stale = True
        self.visible = False

    def set_visible(self, visible: bool) -> None:
        """The pane was shown or hidden; a stale pane is read when shown."""
        self.visible = visible
        if visible and self.stale:
            self.refresh()

    def on_changes(self, changes: list[Change]) -> None:
        """Note that the figures are stale; read them now if the pane is shown."""
        if {change.topic for change in changes} & self.topics:
            self.stale = True
            if self.visible:
                self.refresh()

    def refresh(self) -> None:
        """Read every figure."""
        data = self.runner.read("read the dashboard", self._read, None)
        if data is not None:
            self.pane.show_data(data)
            self.stale = False

    def _read(self) -> DashboardData:
        services = self.services
        sessions = services.sessions.list(limit=MAX_SESSIONS_COUNTED)
        recent = [
            RecentSession(
                session,
                self.directory.title(session.task_id) if session.task_id else "",
                services.signals.for_session(session.id),
            )
            for session in sessions[:RECENT_SESSIONS]
        ]
        inbox = services.inbox.counts()
        # The inbox lists every unanswered question, blocking or not: count the same ones here.
        inbox["asks"] = len(services.inbox.asks(open_only=False))
        return DashboardData(
            progress=services.project.progress(),
            cost=services.sessions.total_cost(),
            sessions=len(sessions),
            turns=sum(session.turns for session in sessions),
            inbox=inbox,
            recent=recent,
        )
