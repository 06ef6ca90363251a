"""Agent session and loop run queries."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import CursorResult, func, select
from sqlalchemy import update as sql_update

from ralph_desk.domain.enums import ChangeTopic, TaskStatus
from ralph_desk.domain.listing import Listing
from ralph_desk.domain.records import AgentSession, LoopRun
from ralph_desk.store import mapping
from ralph_desk.store.database import UnitOfWork
from ralph_desk.store.readable import listing
from ralph_desk.store.schema import AgentSessionRow, LoopRunRow, TaskRow
from ralph_desk.store.writes import LoopRunWrite, SessionWrite, assign, checked


@dataclass(frozen=True)
class OpenSession:
    """An agent session not yet ended: whose task it holds, for which loop run."""

    id: str
    task_id: int | None
    loop_run_id: int | None


@dataclass(frozen=True)
class LoopRunLease:
    """What tells whether a loop run is still alive: its end, its last heartbeat, its host and process."""

    id: int
    state: str
    ended_at: datetime | None
    last_seen: datetime
    host: str | None
    pid: int | None


@dataclass(frozen=True)
class InProgressTask:
    """A task marked in_progress, and since when."""

    id: int
    since: datetime


def task_exists(unit: UnitOfWork, task_id: int) -> bool:
    """Whether a task id names a task."""
    return unit.session.scalar(select(TaskRow.id).where(TaskRow.id == task_id)) is not None


def get(unit: UnitOfWork, session_id: str) -> AgentSession | None:
    """One agent session, by id."""
    row = unit.session.get(AgentSessionRow, session_id)
    return mapping.agent_session(row) if row is not None else None


def insert(unit: UnitOfWork, fields: SessionWrite) -> AgentSession:
    """Insert an agent session."""
    row = AgentSessionRow(**checked(fields, SessionWrite))
    unit.session.add(row)
    unit.session.flush()
    unit.touch(ChangeTopic.SESSIONS, row.id)
    return mapping.agent_session(row)


def update(unit: UnitOfWork, session_id: str, fields: SessionWrite) -> AgentSession | None:
    """Change an agent session's fields."""
    row = unit.session.get(AgentSessionRow, session_id)
    if row is None:
        return None
    assign(row, fields, SessionWrite)
    unit.session.flush()
    unit.touch(ChangeTopic.SESSIONS, session_id)
    return mapping.agent_session(row)


def list_sessions(
    unit: UnitOfWork,
    task_id: int | None = None,
    loop_run_id: int | None = None,
    limit: int = 50,
    offset: int = 0,
) -> Listing[AgentSession]:
    """Agent sessions, newest first."""
    statement = select(AgentSessionRow)
    if task_id is not None:
        statement = statement.where(AgentSessionRow.task_id == task_id)
    if loop_run_id is not None:
        statement = statement.where(AgentSessionRow.loop_run_id == loop_run_id)
    statement = (
        statement.order_by(AgentSessionRow.started_at.desc(), AgentSessionRow.id.desc())
        .limit(limit)
        .offset(offset)
    )

    def rows() -> Sequence[AgentSessionRow]:
        return unit.session.scalars(statement).all()

    return listing(unit.session, rows, mapping.agent_session, mapping.columns, lambda row: row.id, "session")


def total_cost(unit: UnitOfWork, loop_run_id: int | None = None) -> float:
    """The cost of every session (of one loop run), in US dollars."""
    statement = select(func.coalesce(func.sum(AgentSessionRow.cost_usd), 0.0))
    if loop_run_id is not None:
        statement = statement.where(AgentSessionRow.loop_run_id == loop_run_id)
    return float(unit.session.scalar(statement) or 0.0)


def get_loop_run(unit: UnitOfWork, loop_run_id: int) -> LoopRun | None:
    """One loop run, by id."""
    row = unit.session.get(LoopRunRow, loop_run_id)
    return mapping.loop_run(row) if row is not None else None


def insert_loop_run(unit: UnitOfWork, fields: LoopRunWrite) -> LoopRun:
    """Insert a loop run."""
    row = LoopRunRow(**checked(fields, LoopRunWrite))
    unit.session.add(row)
    unit.session.flush()
    unit.touch(ChangeTopic.LOOP, row.id)
    return mapping.loop_run(row)


def update_loop_run(unit: UnitOfWork, loop_run_id: int, fields: LoopRunWrite) -> LoopRun | None:
    """Change a loop run's fields."""
    row = unit.session.get(LoopRunRow, loop_run_id)
    if row is None:
        return None
    assign(row, fields, LoopRunWrite)
    unit.session.flush()
    unit.touch(ChangeTopic.LOOP, loop_run_id)
    return mapping.loop_run(row)


def list_loop_runs(unit: UnitOfWork, limit: int = 20) -> Listing[LoopRun]:
    """Loop runs, newest first."""
    statement = select(LoopRunRow).order_by(LoopRunRow.started_at.desc(), LoopRunRow.id.desc()).limit(limit)

    def rows() -> Sequence[LoopRunRow]:
        return unit.session.scalars(statement).all()

    return listing(unit.session, rows, mapping.loop_run, mapping.columns, lambda row: row.id, "loop run")


def database_now(unit: UnitOfWork) -> datetime:
    """The database server's clock as naive UTC, so that machines with skewed clocks agree on leases."""
    value = unit.session.scalar(select(func.current_timestamp()))
    assert isinstance(value, datetime)
    return value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo is not None else value


def renew_lease(unit: UnitOfWork, loop_run_id: int) -> bool:
    """Stamp a loop run's heartbeat with the database's clock; False when there is no such run.

    No change notice: a heartbeat changes nothing anyone shows, and a notice would wake every waiting loop.
    """
    statement = (
        sql_update(LoopRunRow).where(LoopRunRow.id == loop_run_id).values(heartbeat_at=database_now(unit))
    )
    result = unit.session.execute(statement)
    return isinstance(result, CursorResult) and result.rowcount > 0


def open_sessions(unit: UnitOfWork) -> list[OpenSession]:
    """Every agent session without an end."""
    statement = select(AgentSessionRow.id, AgentSessionRow.task_id, AgentSessionRow.loop_run_id).where(
        AgentSessionRow.ended_at.is_(None)
    )
    return [OpenSession(*row) for row in unit.session.execute(statement)]


def loop_run_leases(unit: UnitOfWork, loop_run_ids: Collection[int]) -> list[LoopRunLease]:
    """The leases of some loop runs (a run from before leases counts as seen when it started)."""
    if not loop_run_ids:
        return []
    statement = select(
        LoopRunRow.id,
        LoopRunRow.state,
        LoopRunRow.ended_at,
        func.coalesce(LoopRunRow.heartbeat_at, LoopRunRow.started_at),
        LoopRunRow.host,
        LoopRunRow.pid,
    ).where(LoopRunRow.id.in_(sorted(loop_run_ids)))
    return [LoopRunLease(*row) for row in unit.session.execute(statement)]


def in_progress_tasks(unit: UnitOfWork) -> list[InProgressTask]:
    """Every task in_progress, with when it was claimed (or last changed, if that is unknown)."""
    statement = select(TaskRow.id, func.coalesce(TaskRow.started_at, TaskRow.updated_at)).where(
        TaskRow.status == TaskStatus.IN_PROGRESS.value
    )
    return [InProgressTask(*row) for row in unit.session.execute(statement)]
