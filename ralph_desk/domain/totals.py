"""How far a project is: task counts, what waits for the human, what the agent sessions cost."""

from __future__ import annotations

from dataclasses import dataclass, field

from ralph_desk.domain.enums import TaskStatus


def every_status(counts: dict[str, int]) -> dict[str, int]:
    """`counts` with every task status present, zero included, in the enum's order."""
    return {status.value: counts.get(status.value, 0) for status in TaskStatus}


@dataclass(frozen=True)
class StatusCounts:
    """How many tasks are in each status (every status, zero included)."""

    by_status: dict[str, int]

    @property
    def total(self) -> int:
        """How many tasks there are."""
        return sum(self.by_status.values())

    @property
    def done(self) -> int:
        """How many tasks are done."""
        return self.by_status[TaskStatus.DONE.value]

    @property
    def percent_done(self) -> float:
        """The share of tasks done, 0 to 100, to one decimal."""
        return round(100.0 * self.done / self.total, 1) if self.total else 0.0


@dataclass(frozen=True)
class InboxCounts:
    """What waits for the human: unanswered questions, suggestions to review, open flags."""

    asks: int = 0
    suggestions: int = 0
    flags: int = 0

    @property
    def total(self) -> int:
        """Everything that waits."""
        return self.asks + self.suggestions + self.flags

    def as_dict(self) -> dict[str, int]:
        """The counts by name, as reports print them."""
        return {"asks": self.asks, "suggestions": self.suggestions, "flags": self.flags}


@dataclass(frozen=True)
class SessionTotals:
    """What every agent session together took: how many, turns, tokens and US dollars."""

    sessions: int = 0
    turns: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


@dataclass(frozen=True)
class ProjectTotals:
    """The whole project's figures, read together in one unit of work."""

    tasks: StatusCounts
    by_feature: dict[str, StatusCounts] = field(default_factory=dict)
    inbox: InboxCounts = field(default_factory=InboxCounts)
    sessions: SessionTotals = field(default_factory=SessionTotals)
    throughput: Throughput = field(default_factory=lambda: Throughput())


@dataclass(frozen=True)
class Rate:
    """Tasks the agents finished over a span of time, and so how many per hour."""

    tasks: int = 0
    hours: float = 0.0

    @property
    def per_hour(self) -> float | None:
        """Tasks per hour (None over no time at all)."""
        return self.tasks / self.hours if self.hours > 0 else None


@dataclass(frozen=True)
class Throughput:
    """Tasks finished per hour: over the latest hours of agent work, and over all of it.

    A task counts as finished when an agent session ended with outcome `done` (merged, or waiting for
    review): what the agents did, whatever the review takes. The span of "all of it" runs from the
    first session's start to the latest session's end (idle time between runs included); the recent
    span is the last `window_hours` of that, or all of it when it is shorter.
    """

    recent: Rate = field(default_factory=Rate)
    overall: Rate = field(default_factory=Rate)
    window_hours: float = 3.0
