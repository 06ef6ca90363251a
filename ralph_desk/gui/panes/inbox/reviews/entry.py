"""A task in review as the Reviews tab shows it (Qt-free)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ralph_desk.domain.records import AgentSession
from ralph_desk.domain.records import Signal as SignalRecord


@dataclass(frozen=True)
class ReviewEntry:
    """A task in review as the tab shows it: the agent's account, its branch, sessions and signals."""

    task_id: int
    title: str
    summary: str
    branch: str
    base: str
    sessions: tuple[AgentSession, ...] = ()
    signals: tuple[SignalRecord, ...] = ()
    feature: str = ""
    merge: str = ""  # approved and waiting to merge, or why its merge was refused
    tip: str = ""
    """The branch's tip when the list was read: what a batch approval merges (empty: no branch)."""
    since: datetime | None = None
    """When the task came into review (its latest `done`)."""
