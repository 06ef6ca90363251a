"""How far the project is and what it cost: the figures the Dashboard, `status` and MCP all show."""

from __future__ import annotations

from typing import Any

from ralph_desk.domain.totals import ProjectTotals, Rate, SessionTotals, StatusCounts, Throughput
from ralph_desk.store import totals as store
from ralph_desk.store.database import Database


def counts_dict(counts: StatusCounts) -> dict[str, Any]:
    """Task counts as reports print them: total, done and every status."""
    return {"total": counts.total, "done": counts.done, "by_status": dict(counts.by_status)}


def progress_dict(tasks: StatusCounts, by_feature: dict[str, StatusCounts]) -> dict[str, Any]:
    """Task progress as reports print it: the counts, per feature, and the percentage done."""
    return {
        **counts_dict(tasks),
        "by_feature": {name: counts_dict(counts) for name, counts in sorted(by_feature.items())},
        "percent_done": tasks.percent_done,
    }


def cost_dict(sessions: SessionTotals) -> dict[str, Any]:
    """What the agent sessions took, as reports print it."""
    return {
        "sessions": sessions.sessions,
        "turns": sessions.turns,
        "input_tokens": sessions.input_tokens,
        "output_tokens": sessions.output_tokens,
        "total_usd": round(sessions.cost_usd, 6),
    }


def rate_dict(rate: Rate) -> dict[str, Any]:
    """Tasks finished over a span, as reports print it."""
    per_hour = rate.per_hour
    return {
        "tasks": rate.tasks,
        "hours": round(rate.hours, 4),
        "per_hour": None if per_hour is None else round(per_hour, 2),
    }


def throughput_dict(throughput: Throughput) -> dict[str, Any]:
    """Tasks the agents finished per hour, recently and overall, as reports print it."""
    return {
        "window_hours": throughput.window_hours,
        "recent": rate_dict(throughput.recent),
        "overall": rate_dict(throughput.overall),
    }


class ProgressService:
    """The project's figures, each counted once by the database."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def totals(self) -> ProjectTotals:
        """Task counts (overall and per feature), waiting inbox items and session totals, read together."""
        with self.db.read() as unit:
            return store.project_totals(unit)
