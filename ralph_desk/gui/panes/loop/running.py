"""The sessions a parallel loop runs, and the one the live stream follows (Qt-free)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True)
class RunningSession:
    """One running session as the pane names it."""

    session_id: str
    title: str
    started: datetime


@dataclass
class RunningSessions:
    """Running sessions in start order; the stream follows the oldest until it ends, then the next."""

    sessions: dict[str, RunningSession] = field(default_factory=dict)
    followed: str | None = None

    def started(self, session: RunningSession) -> bool:
        """Note a session that started; whether the stream now follows it."""
        self.sessions[session.session_id] = session
        if self.followed is None:
            self.followed = session.session_id
            return True
        return False

    def ended(self, session_id: str) -> RunningSession | None:
        """Note a session that ended; the session the stream follows next, when it was the followed one."""
        self.sessions.pop(session_id, None)
        if session_id != self.followed:
            return None
        self.followed = next(iter(self.sessions), None)
        return self.sessions.get(self.followed) if self.followed else None

    def shown(self, session_id: str | None) -> bool:
        """Whether an event of this session belongs in the stream (events of no session always do)."""
        return session_id is None or self.followed is None or session_id == self.followed

    def others(self) -> str:
        """The running sessions the stream does not show, e.g. `also running: #3 Draw, #5 Label`."""
        rest = [session.title for key, session in self.sessions.items() if key != self.followed]
        return f"also running: {', '.join(rest)}" if rest else ""
