"""Task and task-dependency queries, including the next-task choice and the atomic claim."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Collection, Iterable, Sequence
from functools import cache
from typing import Any

from sqlalchemy import (
    Column,
    ColumnElement,
    Row,
    Select,
    SQLColumnExpression,
    String,
    Update,
    bindparam,
    case,
    cast,
    delete,
    func,
    literal,
    or_,
    select,
)
from sqlalchemy import insert as insert_rows
from sqlalchemy import update as update_rows
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import aliased
from sqlalchemy.sql.elements import Label

from ralph_desk.domain.enums import ChangeTopic, Priority, TaskStatus
from ralph_desk.domain.listing import Listing
from ralph_desk.domain.overlap import Footprint, choose
from ralph_desk.domain.records import Task, TaskSummary
from ralph_desk.store import mapping
from ralph_desk.store.database import Database, UnitOfWork
from ralph_desk.store.errors import UnreadableRowError
from ralph_desk.store.readable import listing, undecodable_column, undecodable_message
from ralph_desk.store.schema import (
    DisciplineRow,
    FeatureRow,
    TaskCommentRow,
    TaskDependencyRow,
    TaskRow,
    utcnow,
)
from ralph_desk.store.writes import TaskWrite, assign, checked

_LIKE_ESCAPE = "\\"

PRIORITY_RANK = case({member.value: member.rank for member in Priority}, value=TaskRow.priority, else_=-1)
"""Priority as a number (critical highest), portable to every backend."""


def _row(unit: UnitOfWork, task_id: int) -> TaskRow | None:
    return unit.session.get(TaskRow, task_id)


def exists(unit: UnitOfWork, task_id: int) -> bool:
    """Whether a task with this id exists."""
    return unit.session.scalar(select(TaskRow.id).where(TaskRow.id == task_id)) is not None


def existing_ids(unit: UnitOfWork, task_ids: Iterable[int]) -> set[int]:
    """Which of these ids name tasks."""
    wanted = set(task_ids)
    if not wanted:
        return set()
    return set(unit.session.scalars(select(TaskRow.id).where(TaskRow.id.in_(wanted))))


def depends_on(unit: UnitOfWork, task_id: int) -> tuple[int, ...]:
    """Ids of the tasks this task depends on, ascending."""
    return tuple(
        unit.session.scalars(
            select(TaskDependencyRow.depends_on_id)
            .where(TaskDependencyRow.task_id == task_id)
            .order_by(TaskDependencyRow.depends_on_id)
        )
    )


# Table columns, not ORM attributes: a select of ORM attributes goes through the ORM's compile and
# result machinery and costs as much as loading whole rows.
_TASKS = TaskRow.metadata.tables[TaskRow.__tablename__]
_TASK = _TASKS.c
_DEPENDENCY = TaskDependencyRow.__table__.c
_DEPENDS_ON = (
    select(func.aggregate_strings(cast(_DEPENDENCY.depends_on_id, String), ","))
    .where(_DEPENDENCY.task_id == _TASK.id)
    .scalar_subquery()
)
"""The ids a task depends on, as one comma-separated text (NULL for none)."""
_COMMENT = TaskCommentRow.__table__.c
_FEATURE_NAME = FeatureRow.__table__.c.name
_DISCIPLINE_NAME = DisciplineRow.__table__.c.name
_INSERT_TASKS = insert_rows(_TASKS).returning(_TASK.id, sort_by_parameter_order=True)
_JOINED = {
    "feature": _FEATURE_NAME.label("feature"),
    "discipline": _DISCIPLINE_NAME.label("discipline"),
    "depends_on": _DEPENDS_ON.label("depends_on"),
}


def _selected(kind: type[Task | TaskSummary]) -> tuple[Column[Any] | Label[Any], ...]:
    """What a task record is read from: a column (or a joined value) per field, by the field's name."""
    names = [item.name for item in dataclasses.fields(kind) if item.name != "comments"]
    return tuple(_JOINED[name] if name in _JOINED else _TASK[name] for name in names)


_TASK_COLUMNS = _selected(Task)
_COMMENT_COLUMNS = (
    _COMMENT.id,
    _COMMENT.task_id,
    _COMMENT.author,
    _COMMENT.body,
    _COMMENT.discipline,
    _COMMENT.priority,
    _COMMENT.created_at,
    _COMMENT.updated_at,
)


_GET = (
    select(*_TASK_COLUMNS, *_COMMENT_COLUMNS)
    .select_from(TaskRow.__table__)
    .join(FeatureRow.__table__, FeatureRow.__table__.c.id == _TASK.feature_id)
    .join(DisciplineRow.__table__, DisciplineRow.__table__.c.id == _TASK.discipline_id)
    .outerjoin(TaskCommentRow.__table__, _COMMENT.task_id == _TASK.id)
    .order_by(_COMMENT.id)
)


_GET_ONE = _GET.where(_TASK.id == bindparam("task_id"))


def get(unit: UnitOfWork, task_id: int) -> Task | None:
    """One task with its comments and dependencies."""
    # One Core statement (task, names, comments joined, dependencies aggregated): this read is what every
    # get_task call of an agent costs, and ORM rows made it three statements and over twice the time.
    # On the unit's connection: the session's execute adds a layer of Python that shows in a server,
    # where each call runs with cold caches.
    rows = unit.execute(_GET_ONE, {"task_id": task_id}).all()
    return _task(rows) if rows else None


def read(db: Database, task_id: int) -> Task | None:
    """One task with its comments and dependencies, read by its one statement alone (`Database.fetch`)."""
    rows = db.fetch(_GET_ONE, {"task_id": task_id})
    return _task(rows) if rows else None


_TASK_KEYS = tuple(column.key for column in _TASK_COLUMNS)
_COMMENT_KEYS = tuple(column.key for column in _COMMENT_COLUMNS)


def _task(rows: Sequence[Any]) -> Task:
    """A task from the `_TASK_COLUMNS` and `_COMMENT_COLUMNS` of its rows."""
    width = len(_TASK_COLUMNS)
    values = dict(zip(_TASK_KEYS, rows[0][:width], strict=True))
    ids = values["depends_on"]
    values["depends_on"] = sorted(int(text) for text in ids.split(",")) if ids else ()
    comments = tuple(
        mapping.comment(dict(zip(_COMMENT_KEYS, found[width:], strict=True)))
        for found in rows
        if found[width] is not None
    )
    return mapping.task(values, comments)


def status_of(unit: UnitOfWork, task_id: int) -> TaskStatus | None:
    """A task's status, without loading the rest of it."""
    status = unit.session.scalar(select(TaskRow.status).where(TaskRow.id == task_id))
    return TaskStatus(status) if status is not None else None


def _escape_like(text: str) -> str:
    return (
        text.replace(_LIKE_ESCAPE, _LIKE_ESCAPE * 2)
        .replace("%", _LIKE_ESCAPE + "%")
        .replace("_", _LIKE_ESCAPE + "_")
    )


def _contains(column: SQLColumnExpression[Any], needle: str) -> ColumnElement[bool]:
    # lower() on both sides, so backends whose lower() only folds ASCII (SQLite) still match exact case.
    pattern = literal(f"%{_escape_like(needle)}%", String)
    return func.lower(column).like(func.lower(pattern), escape=_LIKE_ESCAPE)


def _title_matches(query: str) -> ColumnElement[bool]:
    return _contains(TaskRow.title, query)


def _matches(query: str) -> ColumnElement[bool]:
    # Tags are a JSON array: look for the query as JSON would spell it inside one of its strings.
    json_spelling = json.dumps(query)[1:-1]
    return or_(
        _title_matches(query),
        _contains(TaskRow.description, query),
        _contains(cast(TaskRow.tags, String), json_spelling),
    )


def list_summaries(
    unit: UnitOfWork,
    statuses: Collection[str] | None = None,
    features: Collection[str] | None = None,
    disciplines: Collection[str] | None = None,
    origins: Collection[str] | None = None,
    search: str | None = None,
    limit: int | None = None,
    offset: int = 0,
) -> Listing[TaskSummary]:
    """Tasks matching every given filter (each a set of allowed values), by id; title matches first."""
    # Only the listed columns: loading whole rows (descriptions, JSON lists) for 10,000 tasks cost
    # the window ~1.5 s at start-up; these columns make the same summaries in a fraction of that.
    query = _SUMMARIES
    if statuses is not None:
        query = query.where(TaskRow.status.in_(list(statuses)))
    if origins is not None:
        query = query.where(TaskRow.origin.in_(list(origins)))
    if features is not None:
        query = query.where(
            TaskRow.feature_id.in_(select(FeatureRow.id).where(FeatureRow.name.in_(list(features))))
        )
    if disciplines is not None:
        query = query.where(
            TaskRow.discipline_id.in_(
                select(DisciplineRow.id).where(DisciplineRow.name.in_(list(disciplines)))
            )
        )
    if search is not None:
        query = query.where(_matches(search)).order_by(case((_title_matches(search), 0), else_=1))
    query = query.order_by(TaskRow.id).offset(offset).limit(limit)

    def rows() -> Sequence[Row[*tuple[Any, ...]]]:
        return unit.session.execute(query).all()

    return listing(unit.session, rows, _summary, _values, _id, "task")


_SUMMARY_COLUMNS = _selected(TaskSummary)
_SUMMARY_KEYS = tuple(column.key for column in _SUMMARY_COLUMNS)
_SUMMARIES = (
    select(*_SUMMARY_COLUMNS)
    .select_from(TaskRow)
    .join(FeatureRow, FeatureRow.id == TaskRow.feature_id)
    .join(DisciplineRow, DisciplineRow.id == TaskRow.discipline_id)
)


def _values(row: Row[*tuple[Any, ...]]) -> dict[str, Any]:
    return dict(row._mapping)


def _id(row: Row[*tuple[Any, ...]]) -> int:
    return int(row.id)


def _summary(row: Sequence[Any]) -> TaskSummary:
    """A task summary from the `_SUMMARY_COLUMNS` of one row."""
    return mapping.task_summary(dict(zip(_SUMMARY_KEYS, row, strict=True)))


def count_by_status(unit: UnitOfWork) -> dict[str, int]:
    """How many tasks are in each status that has any."""
    rows = unit.session.execute(select(TaskRow.status, func.count(TaskRow.id)).group_by(TaskRow.status))
    return {status: count for status, count in rows}


def count_by_feature(unit: UnitOfWork) -> dict[str, dict[str, int]]:
    """For every feature (even one without tasks), how many of its tasks are in each status that has any."""
    rows = unit.session.execute(
        select(FeatureRow.name, TaskRow.status, func.count(TaskRow.id))
        .outerjoin(TaskRow, TaskRow.feature_id == FeatureRow.id)
        .group_by(FeatureRow.name, TaskRow.status)
        .order_by(FeatureRow.name)
    )
    counts: dict[str, dict[str, int]] = {}
    for feature_name, status, count in rows:
        by_status = counts.setdefault(feature_name, {})
        if status is not None:
            by_status[status] = count
    return counts


def _stamp(row: TaskRow, status: str) -> None:
    """Set a status and its timestamps: in_progress starts, done completes, leaving done un-completes."""
    previous = row.status
    if status == TaskStatus.IN_PROGRESS and previous != TaskStatus.IN_PROGRESS:
        row.started_at = utcnow()
    if status == TaskStatus.DONE and previous != TaskStatus.DONE:
        row.completed_at = utcnow()
    elif status != TaskStatus.DONE:
        row.completed_at = None
    row.status = status


def create(unit: UnitOfWork, fields: TaskWrite, dependency_ids: Iterable[int] = ()) -> Task:
    """Insert a task (fields name `feature_id` and `discipline_id`) and its dependencies."""
    values = dict(checked(fields, TaskWrite))
    status = str(values.pop("status", TaskStatus.PENDING.value))
    row = TaskRow(**values)
    _stamp(row, status)
    unit.session.add(row)
    unit.session.flush()
    unit.touch(ChangeTopic.TASKS, row.id)
    set_dependencies(unit, row.id, dependency_ids)
    task = get(unit, row.id)
    assert task is not None
    return task


def create_many(unit: UnitOfWork, rows: Iterable[TaskWrite]) -> list[int]:
    """Insert new draft or pending tasks without dependencies (fields as for `create`); their ids, in order.

    One Core statement for all of them (post-processing makes a session's drafts at once).
    """
    values = [dict(checked(fields, TaskWrite)) for fields in rows]
    if not values:
        return []
    ids = list(unit.session.scalars(_INSERT_TASKS, values))
    unit.touch(ChangeTopic.TASKS, *ids)
    return ids


def update(unit: UnitOfWork, task_id: int, fields: TaskWrite) -> Task | None:
    """Change a task's fields (`feature_id` and `discipline_id` to move it)."""
    row = _row(unit, task_id)
    if row is None:
        return None
    assign(row, fields, TaskWrite)
    unit.session.flush()
    # A changed feature_id or discipline_id leaves the loaded relationship stale until reloaded.
    unit.session.expire(row)
    unit.touch(ChangeTopic.TASKS, task_id)
    return get(unit, task_id)


def set_status(unit: UnitOfWork, task_id: int, status: str) -> Task | None:
    """Change a task's status, stamping started_at / completed_at."""
    row = _row(unit, task_id)
    if row is None:
        return None
    if row.status != status:
        _stamp(row, status)
        unit.session.flush()
        unit.touch(ChangeTopic.TASKS, task_id)
    return get(unit, task_id)


@cache
def _settle_statement(starts: bool, completes: bool, count_stuck: bool) -> Update:
    """The UPDATE of `settle` for one kind of status change, built once (parameters: task_id, status, now)."""
    status = bindparam("status", type_=_TASK.status.type)
    now = bindparam("now", type_=_TASK.started_at.type)
    values: dict[str, Any] = {"status": status}
    if starts:
        values["started_at"] = case((_TASK.status != status, now), else_=_TASK.started_at)
    if completes:
        values["completed_at"] = case((_TASK.status != status, now), else_=_TASK.completed_at)
    else:
        values["completed_at"] = None
    changed = _TASK.id == bindparam("task_id")
    if count_stuck:
        values["stuck_count"] = _TASK.stuck_count + 1  # in SQL, so concurrent raises add up
    else:
        changed = changed & (_TASK.status != status)
    return update_rows(_TASKS).where(changed).values(**values)


def settle(unit: UnitOfWork, task_id: int, status: str, count_stuck: bool = False) -> Task | None:
    """Set a task's status, stamped as `set_status` does, and raise its stuck count if asked; the task after.

    One Core UPDATE and one read, for the loop's post-processing (a task row loaded earlier in the same
    unit is not refreshed by it).
    """
    statement = _settle_statement(status == TaskStatus.IN_PROGRESS, status == TaskStatus.DONE, count_stuck)
    result = unit.execute(statement, {"task_id": task_id, "status": status, "now": utcnow()})
    if result.rowcount:
        unit.touch(ChangeTopic.TASKS, task_id)
    return get(unit, task_id)


def increment_stuck(unit: UnitOfWork, task_id: int) -> int | None:
    """Raise a task's stuck count by one (in SQL, so concurrent raises add up); returns the new count."""
    row = _row(unit, task_id)
    if row is None:
        return None
    row.stuck_count = TaskRow.stuck_count + 1
    unit.session.flush()
    unit.touch(ChangeTopic.TASKS, task_id)
    return row.stuck_count


def reset_stuck(unit: UnitOfWork, task_id: int) -> bool:
    """Set a task's stuck count back to zero."""
    row = _row(unit, task_id)
    if row is None:
        return False
    if row.stuck_count != 0:
        row.stuck_count = 0
        unit.session.flush()
        unit.touch(ChangeTopic.TASKS, task_id)
    return True


def delete_task(unit: UnitOfWork, task_id: int) -> bool:
    """Remove a task, its comments and its own dependencies (the caller checks that none depends on it)."""
    row = _row(unit, task_id)
    if row is None:
        return False
    had_dependencies = bool(depends_on(unit, task_id))
    if had_dependencies:
        unit.session.execute(delete(TaskDependencyRow).where(TaskDependencyRow.task_id == task_id))
    unit.session.delete(row)
    unit.session.flush()
    unit.touch(ChangeTopic.TASKS, task_id)
    if had_dependencies:
        unit.touch(ChangeTopic.DEPENDENCIES, task_id)
    return True


def edges(unit: UnitOfWork) -> list[tuple[int, int]]:
    """Every dependency as `(task_id, depends_on_id)`."""
    rows = unit.session.execute(select(TaskDependencyRow.task_id, TaskDependencyRow.depends_on_id))
    return [(task_id, depends_on_id) for task_id, depends_on_id in rows]


def dependents(unit: UnitOfWork, task_id: int) -> list[int]:
    """Ids of the tasks that depend on this one, ascending."""
    return list(
        unit.session.scalars(
            select(TaskDependencyRow.task_id)
            .where(TaskDependencyRow.depends_on_id == task_id)
            .order_by(TaskDependencyRow.task_id)
        )
    )


def set_dependencies(unit: UnitOfWork, task_id: int, dependency_ids: Iterable[int]) -> None:
    """Replace what a task depends on (the caller checks for unknown ids and cycles)."""
    wanted = set(dependency_ids)
    current = set(depends_on(unit, task_id))
    if wanted == current:
        return
    gone = current - wanted
    if gone:
        unit.session.execute(
            delete(TaskDependencyRow).where(
                TaskDependencyRow.task_id == task_id, TaskDependencyRow.depends_on_id.in_(gone)
            )
        )
    unit.session.add_all(
        TaskDependencyRow(task_id=task_id, depends_on_id=depends_on_id)
        for depends_on_id in sorted(wanted - current)
    )
    unit.session.flush()
    unit.touch(ChangeTopic.TASKS, task_id)
    unit.touch(ChangeTopic.DEPENDENCIES, task_id)


def add_dependency(unit: UnitOfWork, task_id: int, depends_on_id: int) -> bool:
    """Make a task depend on another; False when it already did."""
    current = depends_on(unit, task_id)
    if depends_on_id in current:
        return False
    set_dependencies(unit, task_id, [*current, depends_on_id])
    return True


def remove_dependency(unit: UnitOfWork, task_id: int, depends_on_id: int) -> bool:
    """Drop one dependency; False when there was none."""
    current = depends_on(unit, task_id)
    if depends_on_id not in current:
        return False
    set_dependencies(unit, task_id, [other for other in current if other != depends_on_id])
    return True


_BLOCKER = aliased(TaskRow, name="blocker")  # made once: a fresh alias per query is garbage to collect


def _runnable(limit: int, *columns: Any, skip: Collection[int] = ()) -> Select[Any]:
    """`columns` of the pending tasks whose every dependency is done (but `skip`): most urgent first,
    then oldest."""
    blocker = _BLOCKER
    unmet = (
        select(TaskDependencyRow.task_id)
        .join(blocker, blocker.id == TaskDependencyRow.depends_on_id)
        .where(TaskDependencyRow.task_id == TaskRow.id, blocker.status != TaskStatus.DONE.value)
    )
    return (
        select(*columns)
        .where(TaskRow.status == TaskStatus.PENDING.value, ~unmet.exists(), TaskRow.id.not_in(list(skip)))
        .order_by(PRIORITY_RANK.desc(), TaskRow.created_at, TaskRow.id)
        .limit(limit)
    )


def _runnable_ids(limit: int) -> Select[int]:
    """The ids of the pending tasks whose every dependency is done, in the order the loop takes them."""
    return _runnable(limit, TaskRow.id)


def next_runnable(unit: UnitOfWork, limit: int = 1) -> Listing[TaskSummary]:
    """The tasks the loop would run next, in the order it would run them (an error for each unreadable)."""
    ids = list(unit.session.scalars(_runnable_ids(limit)))
    if not ids:
        return Listing()
    query = _SUMMARIES.where(TaskRow.id.in_(ids))

    def rows() -> Sequence[Row[*tuple[Any, ...]]]:
        return unit.session.execute(query).all()

    found = listing(unit.session, rows, _summary, _values, _id, "task")
    by_id = {summary.id: summary for summary in found}
    return found.kept(by_id[task_id] for task_id in ids if task_id in by_id)


CLAIM_WINDOW = 200
"""How many runnable tasks (in queue order) a claim considers when the first ones overlap running work."""

# Any constant both runners agree on: the key of PostgreSQL's transaction-level advisory lock on claims.
_CLAIM_LOCK_KEY = 0x7261_6C70


def _footprints(unit: UnitOfWork, query: Select[Any]) -> list[Footprint]:
    return [
        Footprint(row.id, row.feature_id, tuple(str(path) for path in row.context_files or ()))
        for row in unit.session.execute(query)
    ]


def claim_next(unit: UnitOfWork, skip: Collection[int] = ()) -> Task | None:
    """Mark the next runnable task in_progress and return it, so that no other unit can claim it too.

    Among the runnable tasks the first that shares no context file with an in_progress task (any
    runner's) is taken, one of a feature nobody works on first (`domain.overlap.choose`). On SQLite a
    writing unit holds the database's write lock from its start, which serialises claims. On
    PostgreSQL the claims of every runner queue on one transaction-level advisory lock, so that each
    sees the tasks the one before it took; the candidate rows are locked FOR UPDATE SKIP LOCKED, so
    that a task another transaction is changing is passed over rather than waited on. The tasks in
    `skip` are passed over; a task whose stored text cannot be read raises `UnreadableRowError`.
    """
    columns = (TaskRow.id, TaskRow.feature_id, TaskRow.context_files)
    candidates_query = _runnable(CLAIM_WINDOW, *columns, skip=skip)
    if unit.session.get_bind().dialect.name == "postgresql":
        unit.session.execute(select(func.pg_advisory_xact_lock(_CLAIM_LOCK_KEY)))
        candidates_query = candidates_query.with_for_update(skip_locked=True, of=TaskRow)
    candidates = _footprints(unit, candidates_query)
    if not candidates:
        return None
    running = _footprints(unit, select(*columns).where(TaskRow.status == TaskStatus.IN_PROGRESS.value))
    chosen = choose(candidates, running)
    if chosen is None:
        return None
    try:
        return set_status(unit, chosen.task_id, TaskStatus.IN_PROGRESS.value)
    except OperationalError as error:
        column = undecodable_column(str(error.orig))
        if column is None:
            raise
        raise UnreadableRowError("task", chosen.task_id, undecodable_message(column)) from error
