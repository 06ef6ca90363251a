"""The database handle: SQLite pragmas, all-or-nothing write units, the change log, listeners, busy errors."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, func, select
from sqlalchemy.exc import IntegrityError

from ralph_desk.domain.records import Change
from ralph_desk.store import features as features_store
from ralph_desk.store.database import Database
from ralph_desk.store.errors import StoreBusyError, StoreReadOnlyError
from ralph_desk.store.schema import ChangeRow, FeatureRow, TaskRow
from ralph_desk.store.urls import sqlite_url


class Boom(Exception):
    """An error raised inside a unit of work on purpose."""


def _pragma(db: Database, name: str) -> object:
    with db.engine.connect() as connection:
        return connection.exec_driver_sql(f"PRAGMA {name}").scalar()


def _feature_count(db: Database) -> int:
    with db.read() as unit:
        return unit.session.scalar(select(func.count(FeatureRow.id))) or 0


@pytest.fixture
def locker(db_path: Path, db: Database) -> Iterator[sqlite3.Connection]:
    """A second, plain connection to the same file (opened after `db` created it)."""
    connection = sqlite3.connect(db_path, isolation_level=None)
    yield connection
    connection.close()


def test_sqlite_connections_use_write_ahead_logging(db: Database) -> None:
    assert str(_pragma(db, "journal_mode")).lower() == "wal"


def test_sqlite_connections_enforce_foreign_keys(db: Database) -> None:
    assert _pragma(db, "foreign_keys") == 1
    with pytest.raises(IntegrityError), db.write() as unit:
        unit.session.add(TaskRow(feature_id=404, discipline_id=404, title="orphan"))
        unit.session.flush()


def test_sqlite_connections_wait_the_configured_busy_timeout(db_path: Path) -> None:
    database = Database(sqlite_url(db_path), busy_timeout_s=2.5)
    try:
        assert _pragma(database, "busy_timeout") == 2500
    finally:
        database.dispose()


def test_a_fresh_database_passes_its_integrity_check(db: Database) -> None:
    assert db.integrity_ok()


def test_a_write_unit_commits_everything_it_did(db: Database) -> None:
    with db.write() as unit:
        features_store.create(unit, {"name": "one", "display_name": "One"})
        features_store.create(unit, {"name": "two", "display_name": "Two"})

    assert _feature_count(db) == 2


def test_a_write_unit_that_fails_leaves_nothing_behind(db: Database) -> None:
    heard: list[list[Change]] = []
    db.subscribe(heard.append)
    before = db.latest_change_id()

    with pytest.raises(Boom), db.write() as unit:
        features_store.create(unit, {"name": "one", "display_name": "One"})
        features_store.create(unit, {"name": "two", "display_name": "Two"})
        raise Boom

    assert _feature_count(db) == 0
    assert db.latest_change_id() == before
    assert heard == []


def test_a_read_unit_cannot_record_a_change(db: Database) -> None:
    with pytest.raises(RuntimeError, match="read-only"), db.read() as unit:
        unit.touch("tasks", 1)


def test_a_unit_gathers_its_changes_by_topic_without_repeating_ids(db: Database) -> None:
    with db.write() as unit:
        unit.touch("tasks", 1, 2)
        unit.touch("comments", 7)
        unit.touch("tasks", 2, 3)

        assert unit.changes == [Change("tasks", (1, 2, 3)), Change("comments", (7,))]


def test_committed_changes_reach_the_change_log_for_other_processes(db: Database) -> None:
    start = db.latest_change_id()
    with db.write() as unit:
        unit.touch("tasks", 4)
    with db.write() as unit:
        unit.touch("features", "core")

    newest, changes = db.changes_since(start)

    assert changes == [Change("tasks", (4,)), Change("features", ("core",))]
    assert newest == db.latest_change_id() > start
    assert db.changes_since(newest) == (newest, [])


def test_the_change_log_can_be_read_in_pages(db: Database) -> None:
    for task_id in range(1, 4):
        with db.write() as unit:
            unit.touch("tasks", task_id)

    first_id, first = db.changes_since(0, limit=2)
    _, rest = db.changes_since(first_id)

    assert [change.ids for change in first] == [(1,), (2,)]
    assert [change.ids for change in rest] == [(3,)]


def test_a_write_without_changes_adds_nothing_to_the_log(db: Database) -> None:
    with db.write() as unit:
        features_store.names(unit)

    with db.read() as unit:
        assert unit.session.scalar(select(func.count(ChangeRow.id))) == 0


def test_listeners_hear_each_committed_write_once_after_it_commits(db: Database) -> None:
    heard: list[tuple[list[Change], int]] = []
    db.subscribe(lambda changes: heard.append((changes, _feature_count(db))))

    with db.write() as unit:
        features_store.create(unit, {"name": "core", "display_name": "Core"})

    assert len(heard) == 1
    changes, features_seen = heard[0]
    assert [change.topic for change in changes] == ["features"]
    assert features_seen == 1


def test_an_unsubscribed_listener_hears_nothing_more(db: Database) -> None:
    heard: list[list[Change]] = []
    unsubscribe = db.subscribe(heard.append)
    with db.write() as unit:
        unit.touch("tasks", 1)

    unsubscribe()
    unsubscribe()
    with db.write() as unit:
        unit.touch("tasks", 2)

    assert heard == [[Change("tasks", (1,))]]


def test_a_failing_listener_is_logged_and_does_not_stop_the_others(
    db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(_changes: list[Change]) -> None:
        raise Boom("listener bug")

    heard: list[list[Change]] = []
    db.subscribe(broken)
    db.subscribe(heard.append)

    with caplog.at_level(logging.ERROR, logger="ralph_desk.store"), db.write() as unit:
        unit.touch("tasks", 1)

    assert heard == [[Change("tasks", (1,))]]
    assert any(record.exc_info and record.exc_info[0] is Boom for record in caplog.records)


def test_a_write_while_another_connection_holds_the_write_lock_fails_as_busy(
    db_path: Path, locker: sqlite3.Connection
) -> None:
    impatient = Database(sqlite_url(db_path), busy_timeout_s=0.05)
    try:
        locker.execute("BEGIN IMMEDIATE")

        busy = r"busy timeout \(0\.05 s\).*nothing was written"
        with pytest.raises(StoreBusyError, match=busy), impatient.write() as unit:
            features_store.create(unit, {"name": "core", "display_name": "Core"})

        locker.execute("ROLLBACK")
        with impatient.write() as unit:
            features_store.create(unit, {"name": "core", "display_name": "Core"})
        assert _feature_count(impatient) == 1
    finally:
        impatient.dispose()


def test_reads_go_on_while_another_connection_holds_the_write_lock(
    db: Database, locker: sqlite3.Connection
) -> None:
    with db.write() as unit:
        features_store.create(unit, {"name": "core", "display_name": "Core"})
    locker.execute("BEGIN IMMEDIATE")
    locker.execute("DELETE FROM features")

    assert _feature_count(db) == 1

    locker.execute("ROLLBACK")


def test_a_database_that_refuses_writes_is_said_to_be_read_only_on_either_backend(db: Database) -> None:
    """SQLite's `query_only` and PostgreSQL's read-only sessions refuse a write as a read-only file does:
    the one mapping of driver faults (store/errors.fault_of) words both, never as damage."""
    read_only = Database(db.url, migrate_on_open=False)

    @event.listens_for(read_only.engine, "connect")
    def refuse_writes(connection: Any, _record: Any) -> None:
        cursor = connection.cursor()
        if read_only.is_sqlite:
            cursor.execute("PRAGMA query_only=ON")
        else:
            cursor.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
            connection.commit()  # a setting made in a transaction lasts only once it is committed
        cursor.close()

    read_only.engine.dispose()  # the connection opened before the listener goes
    try:
        with pytest.raises(StoreReadOnlyError) as refused, read_only.write() as unit:
            features_store.create(unit, {"name": "one", "display_name": "One"})
    finally:
        read_only.dispose()
    message = str(refused.value)
    assert "read-only (not damaged)" in message and "nothing was written" in message
    assert "sqlalche" not in message and "SQL" not in message
    assert _feature_count(db) == 0
