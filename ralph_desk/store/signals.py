"""Signal queries: the verbs agents called (`task_signals`) and the human's review of them."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Result, Select, bindparam, case, exists, func, select
from sqlalchemy import insert as insert_rows
from sqlalchemy import update as update_rows
from sqlalchemy.orm import aliased

from ralph_desk.domain.enums import ChangeTopic, ReviewDecision, Severity, TaskStatus, Verb
from ralph_desk.domain.listing import Listing
from ralph_desk.domain.records import Signal
from ralph_desk.store import mapping
from ralph_desk.store.database import UnitOfWork
from ralph_desk.store.readable import listing
from ralph_desk.store.schema import DisciplineRow, FeatureRow, TaskRow, TaskSignalRow, utcnow
from ralph_desk.store.writes import SignalWrite, assign, checked


@dataclass(frozen=True)
class TaskFacts:
    """What signal work needs to know about a task: its state, origin, feature and discipline."""

    id: int
    status: TaskStatus
    origin: str
    feature: str
    feature_id: int
    discipline: str
    discipline_id: int
    title: str


def _select() -> Select[Any]:
    """Signal columns with their discipline's and feature's names, read as plain rows.

    Plain rows, not ORM objects: building 100 mapped objects (identity map, joined loads) and then
    records from them cost ~3 ms of the ~5 ms a session's post-processing read took.
    """
    return _BY_IDS


def _oldest_first(statement: Select[Any]) -> Select[Any]:
    return statement.order_by(TaskSignalRow.created, TaskSignalRow.id)


def _newest_first(statement: Select[Any]) -> Select[Any]:
    return statement.order_by(TaskSignalRow.created.desc(), TaskSignalRow.id.desc())


def _all(
    unit: UnitOfWork, statement: Select[Any], params: Mapping[str, Any] | None = None
) -> Listing[Signal]:
    keys: list[str] = []

    def rows() -> Sequence[Any]:
        result = unit.execute(statement, params)
        keys[:] = result.keys()
        return result.all()

    def values(row: Sequence[Any]) -> dict[str, Any]:
        return dict(zip(keys, row, strict=True))

    def key(row: Sequence[Any]) -> int:
        return int(values(row)["id"])

    return listing(unit.session, rows, lambda row: _record(values(row)), values, key, "signal")


def _records(result: Result[*tuple[Any, ...]]) -> list[Signal]:
    """Records from rows of `_BY_IDS` columns (a plain dict per row: RowMapping.get is 5× slower)."""
    keys = list(result.keys())
    return [_record(dict(zip(keys, values, strict=True))) for values in result]


def _record(row: dict[str, Any]) -> Signal:
    return mapping.signal(row, row["discipline_name"], row["feature_name"])


def _first(unit: UnitOfWork, statement: Select[Any]) -> Signal | None:
    found = _records(unit.execute(statement.limit(1)))  # a row that does not read is an error, not None
    return found[0] if found else None


# Made once: an alias made per query is a fresh set of column objects, cyclic garbage for the collector.
_LATER = aliased(TaskSignalRow, name="later_signal")
_SIGNAL_TASK = aliased(TaskRow, name="signal_task")
_SIGNAL_TASK_FEATURE = aliased(FeatureRow, name="signal_task_feature")


def _not_followed_by_done() -> ColumnElement[bool]:
    """True for signals of a task that has no `done` after them (they still matter for its next session)."""
    later = _LATER
    return ~exists().where(
        later.task_id == TaskSignalRow.task_id,
        later.verb == Verb.DONE.value,
        later.id > TaskSignalRow.id,
    )


def _open_blocking_asks() -> list[ColumnElement[bool]]:
    return [
        TaskSignalRow.verb == Verb.ASK.value,
        TaskSignalRow.blocking.is_(True),
        TaskSignalRow.answered_at.is_(None),
        _not_followed_by_done(),
    ]


_TASK_FACTS = (
    select(
        TaskRow.id,
        TaskRow.status,
        TaskRow.origin,
        TaskRow.title,
        FeatureRow.name,
        FeatureRow.id,
        DisciplineRow.name,
        DisciplineRow.id,
    )
    .join(FeatureRow, FeatureRow.id == TaskRow.feature_id)
    .join(DisciplineRow, DisciplineRow.id == TaskRow.discipline_id)
    .where(TaskRow.id == bindparam("task_id"))
)


def task_facts(unit: UnitOfWork, task_id: int) -> TaskFacts | None:
    """A task's status, origin, feature and discipline (None for an unknown id)."""
    row = unit.execute(_TASK_FACTS, {"task_id": task_id}).one_or_none()
    if row is None:
        return None
    return TaskFacts(
        id=row[0],
        status=TaskStatus(row[1]),
        origin=row[2],
        title=row[3],
        feature=row[4],
        feature_id=row[5],
        discipline=row[6],
        discipline_id=row[7],
    )


_SIGNALS = TaskSignalRow.metadata.tables[TaskSignalRow.__tablename__]
_DISCIPLINES = DisciplineRow.metadata.tables[DisciplineRow.__tablename__]
_FEATURES = FeatureRow.metadata.tables[FeatureRow.__tablename__]
_BY_IDS = select(
    _SIGNALS, _DISCIPLINES.c.name.label("discipline_name"), _FEATURES.c.name.label("feature_name")
).select_from(
    _SIGNALS.outerjoin(_DISCIPLINES, _DISCIPLINES.c.id == _SIGNALS.c.discipline_id).outerjoin(
        _FEATURES, _FEATURES.c.id == _SIGNALS.c.feature_id
    )
)


# Statements the hot paths run, built once: building a select per call (coercing its columns and
# clauses, then keying the compiled cache) cost ~0.3 ms, eight times what running it costs.
_BY_ID_LIST = _BY_IDS.where(_SIGNALS.c.id.in_(bindparam("ids", expanding=True)))
_BY_IDS_LOCKED = _BY_ID_LIST.with_for_update(of=_SIGNALS)
_FOR_SESSION = _BY_IDS.where(_SIGNALS.c.session_id == bindparam("session_id")).order_by(
    _SIGNALS.c.created, _SIGNALS.c.id
)
_INSERT = insert_rows(_SIGNALS)
_LINK_TASK = (
    update_rows(_SIGNALS)
    .where(_SIGNALS.c.id == bindparam("signal_id"))
    .values(created_task_id=bindparam("new_task_id"))
)


def add(unit: UnitOfWork, fields: SignalWrite, discipline: str | None, feature: str | None) -> Signal:
    """Insert a signal in one Core statement (`created` is now unless `fields` has it); the caller names
    its discipline and feature (for the record).

    What an agent's verb call costs: through the ORM the insert took a flush, and the record a query
    for the discipline's name, together about a millisecond more.
    """
    values: SignalWrite = {"created": utcnow(), **checked(fields, SignalWrite)}
    result = unit.session.connection().execute(_INSERT, dict(values))
    assert result.inserted_primary_key is not None
    signal_id = result.inserted_primary_key[0]
    unit.touch(ChangeTopic.SIGNALS, signal_id)
    return mapping.signal({**values, "id": signal_id}, discipline, feature)


def get(unit: UnitOfWork, signal_id: int, for_update: bool = False) -> Signal | None:
    """One signal, by id; `for_update` locks its row until the unit ends (where the backend can)."""
    if for_update:
        # A review reads, checks and then changes a signal; on PostgreSQL two reviews of the same
        # signal must not both pass the check. (A SQLite write unit holds the whole database already.)
        locked = select(TaskSignalRow.id).where(TaskSignalRow.id == signal_id).with_for_update()
        if unit.session.scalar(locked) is None:
            return None
    return _first(unit, _select().where(TaskSignalRow.id == signal_id))


def by_ids(unit: UnitOfWork, signal_ids: Collection[int], for_update: bool = False) -> dict[int, Signal]:
    """The signals with these ids that exist, by id; `for_update` locks their rows as `get` does."""
    wanted = set(signal_ids)
    if not wanted:
        return {}
    statement = _BY_IDS_LOCKED if for_update else _BY_ID_LIST
    return {record.id: record for record in _records(unit.execute(statement, {"ids": sorted(wanted)}))}


def link_created_tasks(unit: UnitOfWork, created: Mapping[int, int]) -> None:
    """Record the draft task each new_task suggestion became (suggestion id → task id), in one statement."""
    if not created:
        return
    unit.execute(
        _LINK_TASK,
        [{"signal_id": signal_id, "new_task_id": task_id} for signal_id, task_id in created.items()],
    )
    unit.touch(ChangeTopic.SIGNALS, *created)


def update(unit: UnitOfWork, signal_id: int, fields: SignalWrite) -> Signal | None:
    """Change a signal's review fields."""
    row = unit.session.get(TaskSignalRow, signal_id)
    if row is None:
        return None
    assign(row, fields, SignalWrite)
    unit.session.flush()
    unit.touch(ChangeTopic.SIGNALS, signal_id)
    discipline = row.discipline.name if row.discipline is not None else None
    return mapping.signal(
        mapping.columns(row), discipline, row.feature.name if row.feature is not None else None
    )


def for_session(unit: UnitOfWork, session_id: str) -> Listing[Signal]:
    """Every signal of one agent session, in the order they were called (an error for each unreadable)."""
    return _all(unit, _FOR_SESSION, {"session_id": session_id})


def for_task(unit: UnitOfWork, task_id: int) -> Listing[Signal]:
    """Every signal of one task, oldest first."""
    return _all(unit, _oldest_first(_select().where(TaskSignalRow.task_id == task_id)))


def learnings(
    unit: UnitOfWork, feature: str | None = None, scope: str | None = None, task_id: int | None = None
) -> Listing[Signal]:
    """`learned` signals, oldest first, of tasks in `feature` / of one scope / of one task."""
    statement = _select().where(TaskSignalRow.verb == Verb.LEARNED.value)
    if feature is not None:
        statement = _of_feature(statement, feature)
    if scope is not None:
        statement = statement.where(TaskSignalRow.scope == scope)
    if task_id is not None:
        statement = statement.where(TaskSignalRow.task_id == task_id)
    return _all(unit, _oldest_first(statement))


def _of_feature(statement: Select[TaskSignalRow], feature: str) -> Select[TaskSignalRow]:
    """Limit to signals of tasks in a feature (by the task's feature, not a suggestion's)."""
    task, task_feature = _SIGNAL_TASK, _SIGNAL_TASK_FEATURE
    return (
        statement.join(task, task.id == TaskSignalRow.task_id)
        .join(task_feature, task_feature.id == task.feature_id)
        .where(task_feature.name == feature)
    )


def flags(
    unit: UnitOfWork,
    resolutions: Sequence[str] | None = None,
    severities: Sequence[str] | None = None,
    categories: Sequence[str] | None = None,
    feature: str | None = None,
    task_id: int | None = None,
) -> Listing[Signal]:
    """`flag` signals: blocking first, then warning, then info; newest first within a severity."""
    statement = _select().where(TaskSignalRow.verb == Verb.FLAG.value)
    if resolutions is not None:
        statement = statement.where(TaskSignalRow.resolution.in_(resolutions))
    if severities is not None:
        statement = statement.where(TaskSignalRow.severity.in_(severities))
    if categories is not None:
        statement = statement.where(TaskSignalRow.category.in_(categories))
    if task_id is not None:
        statement = statement.where(TaskSignalRow.task_id == task_id)
    if feature is not None:
        statement = _of_feature(statement, feature)
    severity_rank = case(
        *((TaskSignalRow.severity == member.value, -member.rank) for member in Severity), else_=1
    )
    return _all(
        unit,
        statement.order_by(severity_rank, TaskSignalRow.created.desc(), TaskSignalRow.id.desc()),
    )


def answered_asks(unit: UnitOfWork, task_id: int) -> list[Signal]:
    """Answered asks of a task that no later `done` has made moot, oldest first (every one, or an error)."""
    statement = _select().where(
        TaskSignalRow.task_id == task_id,
        TaskSignalRow.verb == Verb.ASK.value,
        TaskSignalRow.answered_at.is_not(None),
        _not_followed_by_done(),
    )
    return _records(unit.execute(_oldest_first(statement)))


def latest_partial(unit: UnitOfWork, task_id: int) -> Signal | None:
    """The newest `partial` of a task unless a `done` came after it."""
    statement = _newest_first(
        _select().where(
            TaskSignalRow.task_id == task_id,
            TaskSignalRow.verb == Verb.PARTIAL.value,
            _not_followed_by_done(),
        )
    )
    return _first(unit, statement)


def latest_partials(unit: UnitOfWork, task_ids: Collection[int]) -> dict[int, Signal]:
    """`latest_partial` of each of these tasks that has one, in one query."""
    statement = _newest_first(
        _select().where(
            TaskSignalRow.task_id.in_(list(task_ids)),
            TaskSignalRow.verb == Verb.PARTIAL.value,
            _not_followed_by_done(),
        )
    )
    latest: dict[int, Signal] = {}
    for signal in _all(unit, statement) if task_ids else []:
        latest.setdefault(signal.task_id, signal)
    return latest


def _waiting_asks(statement: Select[Any]) -> Select[Any]:
    return statement.join(TaskRow, TaskRow.id == TaskSignalRow.task_id).where(
        *_open_blocking_asks(), TaskRow.status == TaskStatus.NEEDS_INPUT.value
    )


def asks(unit: UnitOfWork, open_only: bool = True) -> Listing[Signal]:
    """Open blocking asks of tasks waiting for input (or, with `open_only` false, every unanswered ask)."""
    if open_only:
        statement = _waiting_asks(_select())
    else:
        statement = _select().where(TaskSignalRow.verb == Verb.ASK.value, TaskSignalRow.answered_at.is_(None))
    return _all(unit, _oldest_first(statement))


def latest_answered_asks(unit: UnitOfWork, limit: int) -> Listing[Signal]:
    """Answered asks of every task, the latest answer first."""
    statement = (
        _select()
        .where(TaskSignalRow.verb == Verb.ASK.value, TaskSignalRow.answered_at.is_not(None))
        .order_by(TaskSignalRow.answered_at.desc(), TaskSignalRow.id.desc())
        .limit(limit)
    )
    return _all(unit, statement)


def open_blocking_ask_count(unit: UnitOfWork, task_id: int) -> int:
    """How many blocking asks of a task still wait for an answer."""
    return (
        unit.session.scalar(
            select(func.count(TaskSignalRow.id)).where(
                TaskSignalRow.task_id == task_id, *_open_blocking_asks()
            )
        )
        or 0
    )


def suggestions(unit: UnitOfWork, pending_only: bool = True) -> Listing[Signal]:
    """`suggest` signals, oldest first (only those waiting for review when `pending_only`)."""
    statement = _select().where(TaskSignalRow.verb == Verb.SUGGEST.value)
    if pending_only:
        statement = statement.where(TaskSignalRow.review_decision == ReviewDecision.PENDING.value)
    return _all(unit, _oldest_first(statement))


def suggestion_for_task(unit: UnitOfWork, task_id: int) -> Signal | None:
    """The `suggest` signal that a draft task was created from, if any."""
    statement = _oldest_first(
        _select().where(TaskSignalRow.verb == Verb.SUGGEST.value, TaskSignalRow.created_task_id == task_id)
    )
    return _first(unit, statement)
