"""The project's figures as SQL aggregates: task counts, waiting inbox items, session totals.

Every reader of these figures (the Dashboard, `ralph-desk status`, the `get_project_progress` tool)
comes here, so that they count the same rows the same way.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, case, func, select

from ralph_desk.domain.enums import FlagResolution, ReviewDecision, SessionOutcome, Verb
from ralph_desk.domain.totals import (
    InboxCounts,
    ProjectTotals,
    Rate,
    SessionTotals,
    StatusCounts,
    Throughput,
    every_status,
)
from ralph_desk.store.database import UnitOfWork
from ralph_desk.store.schema import AgentSessionRow, FeatureRow, TaskRow, TaskSignalRow


def waiting_question() -> ColumnElement[bool]:
    """The one definition of a question waiting: an `ask` nobody has answered yet, blocking or not."""
    return (TaskSignalRow.verb == Verb.ASK.value) & TaskSignalRow.answered_at.is_(None)


def _pending_suggestion() -> ColumnElement[bool]:
    return (TaskSignalRow.verb == Verb.SUGGEST.value) & (
        TaskSignalRow.review_decision == ReviewDecision.PENDING.value
    )


def _open_flag() -> ColumnElement[bool]:
    return (TaskSignalRow.verb == Verb.FLAG.value) & (TaskSignalRow.resolution == FlagResolution.OPEN.value)


def _count_where(condition: ColumnElement[bool]) -> ColumnElement[int]:
    return func.coalesce(func.sum(case((condition, 1), else_=0)), 0)


def inbox_counts(unit: UnitOfWork) -> InboxCounts:
    """Waiting questions, suggestions to review and open flags, in one pass over the signals."""
    statement = select(
        _count_where(waiting_question()), _count_where(_pending_suggestion()), _count_where(_open_flag())
    ).where(TaskSignalRow.verb.in_((Verb.ASK.value, Verb.SUGGEST.value, Verb.FLAG.value)))
    asks, suggestions, flags = unit.session.execute(statement).one()
    return InboxCounts(asks=int(asks), suggestions=int(suggestions), flags=int(flags))


def session_totals(unit: UnitOfWork) -> SessionTotals:
    """Every agent session's turns, tokens and cost, summed by the database."""
    row = AgentSessionRow
    statement = select(
        func.count(row.id),
        func.coalesce(func.sum(row.turns), 0),
        func.coalesce(func.sum(row.input_tokens), 0),
        func.coalesce(func.sum(row.output_tokens), 0),
        func.coalesce(func.sum(row.cost_usd), 0.0),
    )
    sessions, turns, input_tokens, output_tokens, cost = unit.session.execute(statement).one()
    return SessionTotals(int(sessions), int(turns), int(input_tokens), int(output_tokens), float(cost))


def _tasks_finished(since: ColumnElement[bool] | None = None) -> ColumnElement[int]:
    """How many tasks had a session end `done` (each task once), where `since` holds."""
    row = AgentSessionRow
    finished = row.outcome == SessionOutcome.DONE.value
    condition = finished if since is None else finished & since
    return func.count(func.distinct(case((condition, row.task_id), else_=None)))


def throughput(unit: UnitOfWork, window_hours: float = 3.0) -> Throughput:
    """Tasks the agents finished per hour, over the last `window_hours` of their work and over all of it."""
    row = AgentSessionRow
    first, last, finished = unit.session.execute(
        select(func.min(row.started_at), func.max(row.ended_at), _tasks_finished())
    ).one()
    if first is None or last is None:
        return Throughput(window_hours=window_hours)
    start = max(first, last - timedelta(hours=window_hours))
    recent = unit.session.execute(select(_tasks_finished(row.ended_at >= start))).scalar_one()
    return Throughput(
        recent=Rate(int(recent), _hours(start, last)),
        overall=Rate(int(finished), _hours(first, last)),
        window_hours=window_hours,
    )


def _hours(start: datetime, end: datetime) -> float:
    return max(0.0, (end - start).total_seconds() / 3600)


def task_counts(unit: UnitOfWork) -> tuple[StatusCounts, dict[str, StatusCounts]]:
    """Tasks per status, for the project and for every feature (one without tasks too), by feature name."""
    rows = unit.session.execute(
        select(FeatureRow.name, TaskRow.status, func.count(TaskRow.id))
        .select_from(FeatureRow)
        .outerjoin(TaskRow, TaskRow.feature_id == FeatureRow.id)
        .group_by(FeatureRow.name, TaskRow.status)
        .order_by(FeatureRow.name)
    )
    overall: dict[str, int] = {}
    per_feature: dict[str, dict[str, int]] = {}
    for feature, status, count in rows:
        counts = per_feature.setdefault(feature, {})
        if status is not None:
            counts[status] = count
            overall[status] = overall.get(status, 0) + count
    by_feature = {name: StatusCounts(every_status(counts)) for name, counts in per_feature.items()}
    return StatusCounts(every_status(overall)), by_feature


def project_totals(unit: UnitOfWork) -> ProjectTotals:
    """Every figure of the project, read in the same unit of work."""
    tasks, by_feature = task_counts(unit)
    return ProjectTotals(tasks, by_feature, inbox_counts(unit), session_totals(unit), throughput(unit))
