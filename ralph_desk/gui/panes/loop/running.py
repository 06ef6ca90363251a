"""The sessions a parallel loop runs, their running figures, and the one the live stream follows (Qt-free).

Which session the stream shows: until the person picks one, the oldest running session, and when it
ends the next oldest. A session the person picked stays shown when it ends (its stream says so) while
others run, until the person picks another; when none runs beside it, the next session to start is
followed again.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from datetime import datetime

from ralph_desk.gui import fmt
from ralph_desk.loop.model import EventKind, LiveEvent

# What a running session is doing, by the kind of its latest event.
STATES: dict[EventKind, str] = {
    EventKind.SESSION_STARTED: "starting",
    EventKind.INIT: "starting",
    EventKind.ASSISTANT_TEXT: "writing",
    EventKind.TOOL_CALL: "calling a tool",
    EventKind.TOOL_RESULT: "waiting for the model",
    EventKind.PERMISSION_DENIED: "waiting for the model",
    EventKind.RETRY: "retrying the model",
    EventKind.RATE_LIMIT: "rate-limited",
    EventKind.ERROR: "error",
    EventKind.RESULT: "finishing",
    EventKind.COST: "finishing",
    EventKind.CHECK_STARTED: "running the checks",
    EventKind.CHECK_ENDED: "checks ended",
}
KEPT_EVENTS = 5000  # per running session, so that choosing it shows its stream from the start
SPEAKING = frozenset({EventKind.ASSISTANT_TEXT, EventKind.TOOL_CALL})
ACTION_CHARS = 160


@dataclass
class SessionFigures:
    """What a session's header counts: tool calls, messages, turns, cost, and its latest action."""

    title: str = ""
    session_id: str = ""
    tool_calls: int = 0
    messages: int = 0
    turns: int = 0
    cost_usd: float = 0.0
    started: datetime | None = None
    """When the live session started (None: not live)."""
    reported_turns: bool = False
    """Whether the agent reported its turns (else they are counted from the stream)."""
    last_action: str = ""
    """What the agent said or called last, on one line."""
    outcome: str | None = None
    """How the session ended (None while it runs)."""
    last_kind: EventKind | None = None

    def take(self, event: LiveEvent) -> None:
        """Count one event of the session."""
        kind = event.kind
        if kind is EventKind.TOOL_CALL:
            self.tool_calls += 1
        elif kind is EventKind.ASSISTANT_TEXT:
            self.messages += 1
        elif kind is EventKind.COST:
            self.cost_usd = float(event.data.get("cost_usd") or 0.0)
            self._reported(int(event.data.get("turns") or 0))
        elif kind is EventKind.SESSION_ENDED:
            self.outcome = event.text
            self._reported(int(event.data.get("turns") or 0))
            if event.data.get("cost_usd") is not None:
                self.cost_usd = float(event.data["cost_usd"])
        if kind in SPEAKING:
            self.last_action = fmt.one_line(event.text, ACTION_CHARS)
            # A turn begins when the agent speaks again after tool results (until it reports turns).
            if self.last_kind not in SPEAKING and not self.reported_turns:
                self.turns += 1
        if kind is not EventKind.STDERR:
            self.last_kind = kind

    def _reported(self, turns: int) -> None:
        if turns:
            self.turns = turns
            self.reported_turns = True


@dataclass
class RunningSession:
    """One running session: its task as the pane names it, its agent, its figures and its events so far."""

    session_id: str
    title: str
    started: datetime
    agent: str = ""
    figures: SessionFigures = field(default_factory=SessionFigures)
    events: deque[LiveEvent] = field(default_factory=lambda: deque(maxlen=KEPT_EVENTS))

    def __post_init__(self) -> None:
        self.figures.title = self.title
        self.figures.session_id = self.session_id
        self.figures.started = self.started

    def take(self, event: LiveEvent) -> None:
        """Keep and count one event of this session."""
        self.events.append(event)
        self.figures.take(event)

    def row(self) -> RunningRow:
        """A snapshot of this session for the table and the glance view."""
        f = self.figures
        state = (f.outcome or "").replace("_", " ") or STATES.get(f.last_kind or EventKind.INIT, "running")
        return RunningRow(
            self.session_id, self.title, self.agent, self.started, f.turns, f.cost_usd, f.last_action, state
        )


@dataclass(frozen=True)
class RunningRow:
    """What the table and the glance view show of one session (a snapshot: equal when nothing changed)."""

    session_id: str
    title: str
    agent: str
    started: datetime
    turns: int = 0
    cost_usd: float = 0.0
    last_action: str = ""
    state: str = "starting"
    """What the session is doing: starting, writing, calling a tool, waiting for the model, finishing…"""


@dataclass
class RunningSessions:
    """Running sessions in start order, and the one the stream follows."""

    sessions: dict[str, RunningSession] = field(default_factory=dict)
    followed: str | None = None
    chosen: bool = False
    """Whether the person picked the followed session (it then stays shown when it ends)."""
    kept: RunningSession | None = None
    """The followed session once it ended, while it stays shown."""

    def started(self, session: RunningSession) -> bool:
        """Note a session that started; whether the stream now follows it."""
        self.sessions[session.session_id] = session
        if self.followed is None or (self.kept is not None and not self.chosen):
            self._follow(session.session_id, chosen=False)
            return True
        return False

    def take(self, event: LiveEvent) -> RunningSession | None:
        """Keep an event of a running session; that session (None for events of no running session)."""
        session = self.sessions.get(event.session_id or "")
        if session is not None:
            session.take(event)
        return session

    def ended(self, session_id: str) -> RunningSession | None:
        """Note a session that ended; the session the stream follows next, when it moves on to another."""
        session = self.sessions.pop(session_id, None)
        if session_id != self.followed:
            if self.kept is not None and not self.sessions:
                self.chosen = False  # nothing runs beside the kept session: the next one is followed
            return None
        if self.chosen and self.sessions:
            self.kept = session
            return None
        self.chosen = False
        following = next(iter(self.sessions), None)
        if following is None:
            self.kept = session  # nothing else runs: shown until the next session starts
            return None
        self._follow(following, chosen=False)
        return self.sessions[following]

    def choose(self, session_id: str) -> RunningSession | None:
        """The person picked a running session: the one to show now (None: not running, or shown already)."""
        session = self.sessions.get(session_id)
        if session is None:
            return None
        shown_already = session_id == self.followed and self.kept is None
        self._follow(session_id, chosen=True)
        return None if shown_already else session

    def shown(self, session_id: str | None) -> bool:
        """Whether an event of this session belongs in the stream (events of no session always do)."""
        return session_id is None or self.followed is None or session_id == self.followed

    def rows(self) -> list[RunningRow]:
        """The running sessions, oldest first."""
        return [session.row() for session in self.sessions.values()]

    def others(self) -> str:
        """The running sessions the stream does not show: `also running: #3 Draw`, or how many."""
        return also_running([session.title for key, session in self.sessions.items() if key != self.followed])

    def _follow(self, session_id: str, chosen: bool) -> None:
        self.followed = session_id
        self.chosen = chosen
        self.kept = None


def also_running(titles: list[str]) -> str:
    """The other sessions, short so that the pane's heading stays one or two lines (the table names all)."""
    if len(titles) == 1:
        return f"also running: {titles[0]}"
    return f"also running: {len(titles)} other sessions" if titles else ""
