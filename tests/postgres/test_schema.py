"""The schema on PostgreSQL: the migrations create it, upgrade it with its data, take it down and up
again, build exactly what the ORM describes, and the database enforces its constraints."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, inspect, select, text
from sqlalchemy.exc import IntegrityError

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.services.disciplines import DisciplineService
from ralph_desk.services.features import FeatureService
from ralph_desk.services.inbox import InboxService
from ralph_desk.services.signals import SignalService
from ralph_desk.services.tasks import TaskService
from ralph_desk.store import migrate
from ralph_desk.store.database import Database
from ralph_desk.store.engine import create_db_engine
from ralph_desk.store.schema import (
    Base,
    DisciplineRow,
    FeatureRow,
    LoopRunRow,
    TaskRow,
    TaskSignalRow,
)
from tests.store.test_migrations import BAD_ROWS, FUTURE_REVISION


@pytest.fixture
def engine(pg_url: str) -> Iterator[Engine]:
    made = create_db_engine(pg_url)
    yield made
    made.dispose()


@pytest.fixture
def db(pg_url: str) -> Iterator[Database]:
    """A migrated PostgreSQL database holding feature 1, discipline 1 and tasks 1 and 2."""
    database = Database(pg_url)
    with database.write() as unit:
        unit.session.add(FeatureRow(id=1, name="charts", display_name="Charts"))
        unit.session.add(DisciplineRow(id=1, name="frontend", display_name="Frontend"))
        unit.session.flush()
        unit.session.add(TaskRow(id=1, feature_id=1, discipline_id=1, title="Chart"))
        unit.session.add(TaskRow(id=2, feature_id=1, discipline_id=1, title="Legend"))
    yield database
    database.dispose()


def _tables(engine: Engine) -> set[str]:
    return set(inspect(engine).get_table_names()) - {"alembic_version"}


def _alembic(engine: Engine, action: str, target: str) -> None:
    with engine.begin() as connection:
        config = Config()
        config.set_main_option("script_location", str(migrate.MIGRATIONS_DIR))
        config.attributes["connection"] = connection
        getattr(command, action)(config, target)


def _insert(db: Database, row: Base) -> None:
    with db.write() as unit:
        unit.session.add(row)
        unit.session.flush()


def _seed_at_0001(engine: Engine) -> None:
    """A feature, a discipline, a task and a blocking ask, written as revision 0001 knew them."""
    statements = [
        "INSERT INTO project (id, title, description, created_at) VALUES (1, 'Tides', 'Old data', :now)",
        "INSERT INTO features (id, name, display_name, knowledge_paths, context_files, dependencies,"
        " created_at) VALUES (1, 'charts', 'Charts', '[]', '[\"docs/charts.md\"]', '[]', :now)",
        "INSERT INTO disciplines (id, name, display_name, icon, color, skills, disabled_tools, mcp_servers,"
        " created_at) VALUES (1, 'frontend', 'Frontend', 'code', '#3b82f6', '[]',"
        " '[\"create_task\", \"delete_task\"]', '{}',"
        " :now)",
        "INSERT INTO tasks (id, feature_id, discipline_id, title, priority, status, acceptance_criteria,"
        " tags, context_files, output_artifacts, origin, stuck_count, created_at, updated_at)"
        " VALUES (1, 1, 1, 'Draw the tide chart', 'high', 'needs_input', '[\"It renders\"]', '[]', '[]',"
        " '[]', 'human', 1, :now, :now)",
        "INSERT INTO task_signals (id, task_id, discipline_id, session_id, verb, question, blocking, created)"
        " VALUES (1, 1, 1, 's-1', 'ask', 'Metres or feet?', true, :now)",
    ]
    with engine.begin() as connection:
        for statement in statements:
            connection.execute(text(statement), {"now": "2026-03-01 12:00:00.000000"})
        for table in ("project", "features", "disciplines", "tasks", "task_signals"):
            # Rows written with their ids leave the id sequence behind; move it on as a tool would.
            connection.execute(text(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), 1)"))


def test_opening_an_empty_postgresql_database_creates_every_table_at_head(pg_url: str) -> None:
    db = Database(pg_url)
    try:
        assert _tables(db.engine) == set(Base.metadata.tables)
        assert migrate.current_revision(db.engine) == migrate.head_revision()
        assert not migrate.needs_upgrade(db.engine)
        assert db.integrity_ok()
    finally:
        db.dispose()


def test_the_migrations_build_on_postgresql_exactly_what_the_schema_describes(pg_url: str) -> None:
    db = Database(pg_url)
    try:
        with db.engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            differences = compare_metadata(context, Base.metadata)
        assert differences == []
    finally:
        db.dispose()


def test_a_postgresql_database_at_0001_with_data_is_upgraded_to_head_keeping_it(
    pg_url: str, engine: Engine
) -> None:
    migrate.upgrade(engine, "0001")
    _seed_at_0001(engine)
    assert "change_log" not in _tables(engine)

    db = Database(pg_url)
    try:
        assert migrate.current_revision(db.engine) == migrate.head_revision()
        task = TaskService(db).get(1)
        assert (task.title, task.status, task.feature, task.acceptance_criteria) == (
            "Draw the tide chart",
            TaskStatus.NEEDS_INPUT,
            "charts",
            ("It renders",),
        )
        assert [ask.question for ask in InboxService(db).asks()] == ["Metres or feet?"]
        assert DisciplineService(db).get("frontend").disabled_tools == ("create_task",)  # delete_task retired
        SignalService(db).record(1, "s-2", "done", summary="Drawn.")
        assert db.latest_change_id() > 0
    finally:
        db.dispose()


def test_the_migrations_take_a_postgresql_database_down_to_nothing_and_up_again(
    pg_url: str, engine: Engine
) -> None:
    migrate.upgrade(engine)
    _alembic(engine, "downgrade", "0001")
    assert "change_log" not in _tables(engine)
    _alembic(engine, "downgrade", "base")
    assert _tables(engine) == set()

    db = Database(pg_url)
    try:
        assert _tables(db.engine) == set(Base.metadata.tables)
        FeatureService(db).create("charts", "Charts")
        assert [feature.name for feature in FeatureService(db).list()] == ["charts"]
    finally:
        db.dispose()


def test_a_postgresql_database_from_a_newer_ralph_desk_is_refused_and_left_alone(
    pg_url: str, engine: Engine
) -> None:
    migrate.upgrade(engine)
    with engine.begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = :v"), {"v": FUTURE_REVISION})

    with pytest.raises(migrate.SchemaTooNewError, match="upgrade ralph-desk to open it"):
        Database(pg_url)

    assert migrate.current_revision(engine) == FUTURE_REVISION


@pytest.mark.parametrize(("_name", "make_row", "constraint"), BAD_ROWS, ids=[row[0] for row in BAD_ROWS])
def test_postgresql_itself_refuses_a_value_outside_the_vocabulary(
    db: Database, _name: str, make_row: Any, constraint: str
) -> None:
    with pytest.raises(IntegrityError, match="violates check constraint") as caught:
        _insert(db, make_row())
    assert constraint in str(caught.value)


def test_postgresql_refuses_a_signal_of_an_unknown_task_by_its_foreign_key(db: Database) -> None:
    with pytest.raises(IntegrityError, match="violates foreign key constraint"):
        _insert(db, TaskSignalRow(task_id=404, verb="done", summary="Done."))


def test_booleans_json_and_times_come_back_from_postgresql_as_they_went_in(db: Database) -> None:
    servers = {"search": {"command": "docs-search", "args": ["--stdio", "ü ✓"], "env": {"K": 'a"b\\c'}}}
    _insert(db, DisciplineRow(id=2, name="docs", display_name="Docs", mcp_servers=servers, skills=[1, 2.5]))
    started = datetime(2026, 3, 1, 14, 0, 0, 123456, tzinfo=timezone(timedelta(hours=2)))
    _insert(
        db,
        LoopRunRow(
            id=1, state="running", agent="claude", allow_edits=True, settings={"x": None}, started_at=started
        ),
    )
    for blocking in (True, False, None):
        _insert(db, TaskSignalRow(task_id=1, verb="ask", question="?", blocking=blocking))

    with db.read() as unit:
        discipline = unit.session.get(DisciplineRow, 2)
        loop_run = unit.session.get(LoopRunRow, 1)
        blocking_values = unit.session.scalars(
            select(TaskSignalRow.blocking).order_by(TaskSignalRow.id)
        ).all()
        column_types = {
            column["name"]: type(column["type"]).__name__
            for column in inspect(unit.session.connection()).get_columns("task_signals")
        }
    assert discipline is not None and loop_run is not None
    assert (discipline.mcp_servers, discipline.skills) == (servers, [1, 2.5])
    assert (loop_run.allow_edits, loop_run.settings) == (True, {"x": None})
    assert blocking_values == [True, False, None]
    assert column_types["blocking"] == "BOOLEAN"
    assert loop_run.started_at == datetime(2026, 3, 1, 12, 0, 0, 123456)  # naive UTC, to the microsecond
