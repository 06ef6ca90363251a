"""Schema revisions: a fresh database at head, an older one upgraded with its data, a newer one refused,
and the CHECK constraints holding at the SQL level."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, func, inspect, select, text
from sqlalchemy.exc import IntegrityError

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.services.disciplines import DisciplineService
from ralph_desk.services.features import FeatureService
from ralph_desk.services.signals import SignalService
from ralph_desk.services.tasks import TaskService
from ralph_desk.store import migrate
from ralph_desk.store.database import Database
from ralph_desk.store.engine import create_db_engine
from ralph_desk.store.schema import (
    Base,
    DisciplineRow,
    FeatureLearningRow,
    FeatureRow,
    ReviewCommentRow,
    TaskCommentRow,
    TaskDependencyRow,
    TaskRow,
    TaskSignalRow,
)
from ralph_desk.store.urls import sqlite_url

pytestmark = pytest.mark.migrates_afresh  # about migrating an empty database

FUTURE_REVISION = "9999_from_the_future"


@pytest.fixture
def url(tmp_path: Path) -> str:
    return sqlite_url(tmp_path / "ralph.db")


@pytest.fixture
def engine(url: str) -> Iterator[Engine]:
    engine = create_db_engine(url)
    yield engine
    engine.dispose()


def _tables(engine: Engine) -> set[str]:
    return set(inspect(engine).get_table_names()) - {"alembic_version"}


def _set_revision(engine: Engine, revision: str) -> None:
    with engine.begin() as connection:
        connection.execute(text("DELETE FROM alembic_version"))
        connection.execute(
            text("INSERT INTO alembic_version (version_num) VALUES (:revision)"), {"revision": revision}
        )


def _seed_at_0001(engine: Engine) -> None:
    """A project with a feature, a discipline, a task and a signal, written as revision 0001 knew them."""
    now = "2026-03-01 12:00:00.000000"
    statements: list[tuple[str, dict[str, Any]]] = [
        (
            "INSERT INTO project (id, title, description, created_at) VALUES (1, 'Tides', 'Old data', :now)",
            {},
        ),
        (
            "INSERT INTO features (id, name, display_name, knowledge_paths, context_files, dependencies, "
            "created_at) VALUES (1, 'charts', 'Charts', '[]', '[\"docs/charts.md\"]', '[]', :now)",
            {},
        ),
        (
            "INSERT INTO disciplines (id, name, display_name, icon, color, skills, disabled_tools, "
            "mcp_servers, created_at) VALUES (1, 'frontend', 'Frontend', 'code', '#3b82f6', '[]', "
            "'[\"create_task\", \"delete_task\"]', '{}', :now)",
            {},
        ),
        (
            "INSERT INTO tasks (id, feature_id, discipline_id, title, priority, status, acceptance_criteria, "
            "tags, context_files, output_artifacts, origin, stuck_count, created_at, updated_at) VALUES "
            "(1, 1, 1, 'Draw the tide chart', 'high', 'needs_input', '[\"It renders\"]', '[]', '[]', '[]', "
            "'human', 1, :now, :now)",
            {},
        ),
        (
            "INSERT INTO task_signals (id, task_id, discipline_id, session_id, verb, question, options, "
            "blocking, created) VALUES (1, 1, 1, 's-1', 'ask', 'Metres or feet?', :options, 1, :now)",
            {"options": "metres\nfeet"},
        ),
    ]
    with engine.begin() as connection:
        for statement, parameters in statements:
            connection.execute(text(statement), {"now": now, **parameters})


# --- revisions -------------------------------------------------------------------------------


def test_a_fresh_database_gets_every_table_of_the_schema_at_head(url: str) -> None:
    db = Database(url)
    try:
        assert _tables(db.engine) == set(Base.metadata.tables)
        assert migrate.current_revision(db.engine) == migrate.head_revision()
        assert not migrate.needs_upgrade(db.engine)
    finally:
        db.dispose()


def test_the_migrations_build_exactly_what_the_schema_describes(url: str) -> None:
    db = Database(url)
    try:
        with db.engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            differences = compare_metadata(context, Base.metadata)
        assert differences == []
    finally:
        db.dispose()


def test_the_revisions_form_one_line_from_0001_to_head() -> None:
    assert migrate.known_revisions() == {f"{number:04d}" for number in range(1, 13)}
    assert migrate.head_revision() == "0012"


def test_a_database_at_0001_with_data_is_upgraded_to_head_keeping_its_data(url: str, engine: Engine) -> None:
    migrate.upgrade(engine, "0001")
    _seed_at_0001(engine)
    assert "change_log" not in _tables(engine)
    assert migrate.needs_upgrade(engine)

    db = Database(url)
    try:
        assert migrate.current_revision(db.engine) == migrate.head_revision()
        assert "change_log" in _tables(db.engine)
        task = TaskService(db).get(1)
        assert (task.title, task.status, task.feature, task.discipline) == (
            "Draw the tide chart",
            TaskStatus.NEEDS_INPUT,
            "charts",
            "frontend",
        )
        assert (task.acceptance_criteria, task.stuck_count) == (("It renders",), 1)
        assert FeatureService(db).get("charts").context_files == ("docs/charts.md",)
        assert DisciplineService(db).get("frontend").disabled_tools == ("create_task",)  # delete_task retired
        (ask,) = SignalService(db).for_task(1)
        assert (ask.question, ask.options, ask.blocking) == ("Metres or feet?", ("metres", "feet"), True)
        assert db.latest_change_id() == 0
    finally:
        db.dispose()


def test_the_upgrade_that_rebuilds_the_tasks_table_keeps_every_row_that_points_at_a_task(
    url: str, engine: Engine
) -> None:
    migrate.upgrade(engine, "0004")
    _seed_at_0001(engine)
    with engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO task_comments (task_id, author, body, created_at, updated_at) "
                "VALUES (1, 'h', 'kept', '2026-03-01 12:00:00', '2026-03-01 12:00:00')"
            )
        )

    db = Database(url)
    try:
        task = TaskService(db).get(1)
        assert [comment.body for comment in task.comments] == ["kept"]
        assert len(SignalService(db).for_task(1)) == 1
        TaskService(db).move(1, TaskStatus.IN_REVIEW.value, Mover.IMPORT)
        assert TaskService(db).get(1).status is TaskStatus.IN_REVIEW
        with db.engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    finally:
        db.dispose()


def test_an_upgraded_database_takes_new_writes_and_logs_them(url: str, engine: Engine) -> None:
    migrate.upgrade(engine, "0001")
    _seed_at_0001(engine)

    db = Database(url)
    try:
        SignalService(db).record(1, "s-2", "done", summary="Drawn.")
        assert db.latest_change_id() > 0
    finally:
        db.dispose()


def test_a_database_from_a_newer_ralph_desk_is_refused_with_advice_to_upgrade(
    url: str, engine: Engine
) -> None:
    migrate.upgrade(engine)
    _set_revision(engine, FUTURE_REVISION)

    with pytest.raises(migrate.SchemaTooNewError) as caught:
        migrate.check_revision(engine)

    message = str(caught.value)
    assert FUTURE_REVISION in message
    assert "upgrade ralph-desk" in message
    assert repr(migrate.head_revision()) in message


@pytest.mark.parametrize("migrate_on_open", [True, False])
def test_opening_a_database_from_a_newer_ralph_desk_is_refused_and_leaves_it_alone(
    url: str, engine: Engine, migrate_on_open: bool
) -> None:
    migrate.upgrade(engine)
    _set_revision(engine, FUTURE_REVISION)

    with pytest.raises(migrate.SchemaTooNewError, match="upgrade ralph-desk to open it"):
        Database(url, migrate_on_open=migrate_on_open)

    assert migrate.current_revision(engine) == FUTURE_REVISION


# --- constraints -----------------------------------------------------------------------------


@pytest.fixture
def db(url: str) -> Iterator[Database]:
    database = Database(url)
    with database.write() as unit:
        unit.session.add(FeatureRow(id=1, name="charts", display_name="Charts"))
        unit.session.add(DisciplineRow(id=1, name="frontend", display_name="Frontend"))
        unit.session.flush()
        unit.session.add(TaskRow(id=1, feature_id=1, discipline_id=1, title="Chart"))
        unit.session.add(TaskRow(id=2, feature_id=1, discipline_id=1, title="Legend"))
    yield database
    database.dispose()


def _insert(db: Database, row: Base) -> None:
    with db.write() as unit:
        unit.session.add(row)
        unit.session.flush()


BAD_ROWS: list[tuple[str, Any, str]] = [
    ("task status", lambda: TaskRow(feature_id=1, discipline_id=1, title="x", status="finished"), "status"),
    (
        "task priority",
        lambda: TaskRow(feature_id=1, discipline_id=1, title="x", priority="urgent"),
        "priority",
    ),
    ("task origin", lambda: TaskRow(feature_id=1, discipline_id=1, title="x", origin="alien"), "origin"),
    (
        "negative stuck count",
        lambda: TaskRow(feature_id=1, discipline_id=1, title="x", stuck_count=-1),
        "stuck",
    ),
    ("signal verb", lambda: TaskSignalRow(task_id=1, verb="shout"), "verb"),
    ("flag severity", lambda: TaskSignalRow(task_id=1, verb="flag", severity="fatal"), "severity"),
    ("flag category", lambda: TaskSignalRow(task_id=1, verb="flag", category="typo"), "category"),
    ("learning scope", lambda: TaskSignalRow(task_id=1, verb="learned", scope="galaxy"), "scope"),
    ("flag resolution", lambda: TaskSignalRow(task_id=1, verb="flag", resolution="closed"), "resolution"),
    (
        "review decision",
        lambda: TaskSignalRow(task_id=1, verb="suggest", review_decision="maybe"),
        "review_decision",
    ),
    (
        "comment priority",
        lambda: TaskCommentRow(task_id=1, author="h", body="b", priority="asap"),
        "priority",
    ),
    ("learning source", lambda: FeatureLearningRow(feature_id=1, text="t", source="rumour"), "source"),
    ("self dependency", lambda: TaskDependencyRow(task_id=1, depends_on_id=1), "self_dependency"),
    ("comment state", lambda: ReviewCommentRow(task_id=1, author="h", body="b", state="lost"), "state"),
    (
        "review comment line",
        lambda: ReviewCommentRow(task_id=1, author="h", body="b", file="a.py", line=0),
        "line_positive",
    ),
]


@pytest.mark.parametrize(("_name", "make_row", "constraint"), BAD_ROWS, ids=[row[0] for row in BAD_ROWS])
def test_the_database_itself_refuses_a_value_outside_its_vocabulary(
    db: Database, _name: str, make_row: Any, constraint: str
) -> None:
    with pytest.raises(IntegrityError, match=r"CHECK constraint failed") as caught:
        _insert(db, make_row())
    assert constraint in str(caught.value)


def test_the_same_rows_with_allowed_values_are_accepted(db: Database) -> None:
    _insert(db, TaskRow(feature_id=1, discipline_id=1, title="x", status="needs_input", priority="critical"))
    _insert(
        db, TaskSignalRow(task_id=1, verb="flag", severity="blocking", category="security", resolution="open")
    )
    _insert(db, TaskSignalRow(task_id=1, verb="learned", scope="project"))
    _insert(db, TaskSignalRow(task_id=1, verb="suggest", review_decision="pending"))
    _insert(db, TaskDependencyRow(task_id=1, depends_on_id=2))
    _insert(db, TaskRow(feature_id=1, discipline_id=1, title="y", status="in_review"))
    _insert(db, ReviewCommentRow(task_id=1, author="h", body="b", file="a.py", line=3, state="requested"))


def test_a_signal_of_an_unknown_task_is_refused_by_its_foreign_key(db: Database) -> None:
    with pytest.raises(IntegrityError, match="FOREIGN KEY constraint failed"):
        _insert(db, TaskSignalRow(task_id=404, verb="done", summary="Done."))


def test_a_refused_row_leaves_nothing_behind(db: Database) -> None:
    with pytest.raises(IntegrityError), db.write() as unit:
        unit.session.add(TaskSignalRow(task_id=1, verb="done", summary="kept?"))
        unit.session.flush()
        unit.session.add(TaskSignalRow(task_id=1, verb="shout"))
        unit.session.flush()
    with db.read() as unit:
        assert unit.session.scalar(select(func.count(TaskSignalRow.id))) == 0
