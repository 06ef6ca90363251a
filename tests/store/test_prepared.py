"""Prepared reads: one statement compiled once, run alone on a pooled cursor, typed and failing as Core's."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import bindparam, select

from ralph_desk.domain.records import Task
from ralph_desk.services.comments import CommentService
from ralph_desk.services.disciplines import DisciplineService
from ralph_desk.services.features import FeatureService
from ralph_desk.services.tasks import TaskService
from ralph_desk.store import tasks as tasks_store
from ralph_desk.store.database import Database
from ralph_desk.store.errors import StoreDataError, StoreGoneError
from ralph_desk.store.prepared import PreparedRead
from ralph_desk.store.schema import FeatureRow, TaskRow

TASKS = TaskRow.__table__.c
NAMES = select(FeatureRow.__table__.c.name).order_by(FeatureRow.__table__.c.id)


@pytest.fixture
def task(
    features: FeatureService, disciplines: DisciplineService, tasks: TaskService, comments: CommentService
) -> Task:
    """A task with every kind of column: texts, JSON lists, timestamps, dependencies and comments."""
    features.create("core", "Core")
    disciplines.create("backend", "Backend", "server", "#10b981")
    first = tasks.create("core", "backend", "First")
    second = tasks.create("core", "backend", "Second")
    third = tasks.create(
        "core",
        "backend",
        "Third",
        acceptance_criteria=["it works", "it is tested"],
        depends_on=[second.id, first.id],
        tags=["fast"],
    )
    comments.add(third.id, "human", "Mind the edge cases")
    comments.add(third.id, "agent", "Noted", discipline="backend")
    return tasks.get(third.id)


def test_a_task_read_alone_is_the_task_its_unit_of_work_reads(db: Database, task: Task) -> None:
    with db.read() as unit:
        in_unit = tasks_store.get(unit, task.id)

    alone = tasks_store.read(db, task.id)

    assert alone == in_unit == task
    assert (
        alone is not None and alone.depends_on == tuple(sorted(alone.depends_on)) and len(alone.comments) == 2
    )


def test_a_task_that_does_not_exist_reads_as_none(db: Database, task: Task) -> None:
    assert tasks_store.read(db, task.id + 100) is None


def test_a_read_inside_a_write_sees_what_that_write_has_not_committed_yet(db: Database, task: Task) -> None:
    with db.write() as unit:
        unit.session.get_one(TaskRow, task.id).title = "Renamed"
        unit.session.flush()
        assert [row[0] for row in db.fetch(select(TASKS.title).where(TASKS.id == task.id), {})] == ["Renamed"]


def test_constants_of_the_statement_and_given_values_both_reach_the_driver(db: Database, task: Task) -> None:
    statement = select(TASKS.id).where(TASKS.title != "First", TASKS.id <= bindparam("highest"))

    assert [row[0] for row in db.fetch(statement, {"highest": task.id - 1})] == [task.id - 1]
    assert [row[0] for row in db.fetch(statement, {"highest": task.id})] == [task.id - 1, task.id]


def test_a_statement_whose_sql_depends_on_its_values_is_not_prepared(db: Database) -> None:
    statement = select(TASKS.id).where(TASKS.id.in_(bindparam("ids", expanding=True)))

    with pytest.raises(TypeError, match="IN-list"):
        PreparedRead(statement, db.engine.dialect)


def test_sqlite_text_that_is_not_utf8_fails_the_read_naming_its_column(db: Database, db_path: Path) -> None:
    with db.write() as unit:
        unit.session.add(FeatureRow(name="core", display_name="Core"))
    with sqlite3.connect(db_path) as connection:
        connection.execute("UPDATE features SET name = CAST(X'C328' AS TEXT)")

    with pytest.raises(StoreDataError, match="stored name is not valid UTF-8"):
        db.fetch(NAMES, {})


def test_sqlite_a_read_after_the_file_was_removed_is_refused(db: Database, db_path: Path) -> None:
    db.fetch(NAMES, {})
    for suffix in ("", "-wal", "-shm"):
        path = Path(f"{db_path}{suffix}")
        if path.exists():
            os.remove(path)

    with pytest.raises(StoreGoneError, match="removed or replaced"):
        db.fetch(NAMES, {})
