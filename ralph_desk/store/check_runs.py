"""Check run queries: a run is recorded when it starts and completed when it ends; the latest per check."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from sqlalchemy import and_, case, func, select, update

from ralph_desk.domain.checks import FAILING, CheckPurpose, CheckRun, CheckStatus, Outcome
from ralph_desk.domain.enums import ChangeTopic
from ralph_desk.store import mapping
from ralph_desk.store.database import UnitOfWork
from ralph_desk.store.schema import CheckRunRow

TOPIC = ChangeTopic.CHECKS


def start(
    unit: UnitOfWork,
    *,
    task_id: int | None,
    session_id: str | None,
    name: str,
    command: str,
    required: bool,
    purpose: CheckPurpose,
    log_path: str | None,
    commit: str | None,
) -> CheckRun:
    """Record a run that starts now (status running)."""
    row = CheckRunRow(
        task_id=task_id,
        session_id=session_id,
        name=name,
        command=command,
        required=required,
        purpose=purpose.value,
        status=CheckStatus.RUNNING.value,
        tail="",
        log_path=log_path,
        commit=commit,
    )
    unit.session.add(row)
    unit.session.flush()
    unit.touch(TOPIC, task_id if task_id is not None else 0)
    return mapping.check_run(row)


def finish(unit: UnitOfWork, run_id: int, outcome: Outcome, finished_at: datetime | None = None) -> None:
    """Record how a run ended."""
    unit.execute(
        update(CheckRunRow)
        .where(CheckRunRow.id == run_id)
        .values(
            status=outcome.status.value,
            exit_code=outcome.exit_code,
            duration_s=outcome.duration_s,
            tail=outcome.tail,
            finished_at=finished_at or datetime.now(UTC),
        )
    )
    task_id = unit.session.scalar(select(CheckRunRow.task_id).where(CheckRunRow.id == run_id))
    unit.touch(TOPIC, task_id if task_id is not None else 0)


def get(unit: UnitOfWork, run_id: int) -> CheckRun | None:
    """One run by its id."""
    row = unit.session.get(CheckRunRow, run_id)
    return mapping.check_run(row) if row is not None else None


def for_session(unit: UnitOfWork, session_id: str) -> list[CheckRun]:
    """The runs made after one session's done, in the order they ran."""
    statement = select(CheckRunRow).where(CheckRunRow.session_id == session_id).order_by(CheckRunRow.id)
    return [mapping.check_run(row) for row in unit.session.scalars(statement)]


def latest(unit: UnitOfWork, task_id: int, purposes: tuple[CheckPurpose, ...]) -> list[CheckRun]:
    """The newest run of each check of a task among `purposes`, in the order of the checks' first runs."""
    wanted = [purpose.value for purpose in purposes]
    newest = (
        select(func.max(CheckRunRow.id))
        .where(CheckRunRow.task_id == task_id, CheckRunRow.purpose.in_(wanted))
        .group_by(CheckRunRow.name)
    )
    statement = select(CheckRunRow).where(CheckRunRow.id.in_(newest)).order_by(CheckRunRow.id)
    return [mapping.check_run(row) for row in unit.session.scalars(statement)]


def latest_of_tasks(unit: UnitOfWork, purposes: tuple[CheckPurpose, ...]) -> dict[int, list[CheckRun]]:
    """`latest` of every task that has a run among `purposes`, by task id in id order."""
    wanted = [purpose.value for purpose in purposes]
    newest = (
        select(func.max(CheckRunRow.id))
        .where(CheckRunRow.task_id.is_not(None), CheckRunRow.purpose.in_(wanted))
        .group_by(CheckRunRow.task_id, CheckRunRow.name)
    )
    statement = (
        select(CheckRunRow).where(CheckRunRow.id.in_(newest)).order_by(CheckRunRow.task_id, CheckRunRow.id)
    )
    found: dict[int, list[CheckRun]] = {}
    for row in unit.session.scalars(statement):
        run = mapping.check_run(row)
        assert run.task_id is not None  # only task runs were asked for
        found.setdefault(run.task_id, []).append(run)
    return found


def history(unit: UnitOfWork, task_id: int, limit: int) -> list[CheckRun]:
    """A task's runs, newest first."""
    statement = (
        select(CheckRunRow).where(CheckRunRow.task_id == task_id).order_by(CheckRunRow.id.desc()).limit(limit)
    )
    return [mapping.check_run(row) for row in unit.session.scalars(statement)]


def running(unit: UnitOfWork, session_ids: Sequence[str]) -> list[CheckRun]:
    """The runs of these sessions not ended (a process that died mid-run leaves them)."""
    statement = select(CheckRunRow).where(
        CheckRunRow.status == CheckStatus.RUNNING.value, CheckRunRow.session_id.in_(list(session_ids))
    )
    return [mapping.check_run(row) for row in unit.session.scalars(statement.order_by(CheckRunRow.id))]


def session_gates(unit: UnitOfWork) -> list[tuple[int, str, bool]]:
    """Each session whose done was checked, in order: (task id, session id, every required check passed)."""
    failing = [status.value for status in FAILING]
    failed = case((and_(CheckRunRow.required.is_(True), CheckRunRow.status.in_(failing)), 1), else_=0)
    statement = (
        select(CheckRunRow.task_id, CheckRunRow.session_id, func.sum(failed))
        .where(
            CheckRunRow.purpose == CheckPurpose.SESSION.value,
            CheckRunRow.session_id.is_not(None),
            CheckRunRow.task_id.is_not(None),
        )
        .group_by(CheckRunRow.task_id, CheckRunRow.session_id)
        .order_by(func.min(CheckRunRow.id))
    )
    return [(task_id, session_id, not failures) for task_id, session_id, failures in unit.execute(statement)]
