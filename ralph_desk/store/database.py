"""The database handle: short units of work, a change log other processes can follow, and listeners."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import CursorResult, Engine, Executable, Select, func, insert, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from ralph_desk.domain.enums import ChangeTopic
from ralph_desk.domain.records import Change
from ralph_desk.store import migrate
from ralph_desk.store.engine import DEFAULT_BUSY_TIMEOUT_S, WRITE_OPTION, create_db_engine
from ralph_desk.store.errors import (
    REPAIR,
    StoreDamagedError,
    StoreDataError,
    StoreError,
    StoreGoneError,
    fault_of,
    in_words,
)
from ralph_desk.store.prepared import PreparedRead
from ralph_desk.store.readable import undecodable_column, undecodable_message
from ralph_desk.store.schema import ChangeRow
from ralph_desk.store.urls import is_sqlite

log = logging.getLogger("ralph_desk.store")

ChangeListener = Callable[[list[Change]], None]
_CHANGE_LOG = ChangeRow.metadata.tables[ChangeRow.__tablename__]


_KNOWN_TOPICS = frozenset(ChangeTopic)


class UnitOfWork:
    """One transaction: a session for the repositories and the changes it made."""

    def __init__(self, session: Session, writable: bool) -> None:
        self.session = session
        self.writable = writable
        self._changes: dict[ChangeTopic, list[int | str]] = {}

    def touch(self, topic: ChangeTopic, *ids: int | str) -> None:
        """Note that this unit changed `topic` (and which ids), for the change log and listeners."""
        if not self.writable:
            raise RuntimeError("a read-only unit of work cannot change anything")
        touched = self._changes.setdefault(topic, [])
        touched.extend(i for i in ids if i not in touched)

    def execute(self, statement: Executable, parameters: Any = None) -> CursorResult[*tuple[Any, ...]]:
        """A Core statement on this unit's connection, after writing out pending ORM changes.

        Around a third of a millisecond less per statement than `session.execute`, whose ORM layer
        (autoflush, ORM compile state, result wrapping) shows on the hot paths of agents' calls.
        """
        self.session.flush()
        return self.session.connection().execute(statement, parameters)

    @property
    def changes(self) -> list[Change]:
        """What this unit changed, one notice per topic."""
        return [Change(topic, tuple(ids)) for topic, ids in self._changes.items()]


def _sqlite_file(url: str) -> Path | None:
    """The file of a SQLite URL (None for memory and for other databases)."""
    if not is_sqlite(url):
        return None
    database = make_url(url).database
    return Path(database) if database and database != ":memory:" else None


def _identity(path: Path | None) -> tuple[int, int] | None:
    """The device and inode of `path` (None when there is no file)."""
    if path is None:
        return None
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return None
    return status.st_dev, status.st_ino


class Database:
    """A migrated database at a URL; hands out units of work and tells listeners what changed."""

    def __init__(
        self, url: str, busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S, migrate_on_open: bool = True
    ):
        self.url = url
        self.busy_timeout_s = busy_timeout_s
        self._file = _sqlite_file(url)
        self.engine: Engine = create_db_engine(url, busy_timeout_s)
        try:
            with self._faults():
                if migrate_on_open:
                    migrate.upgrade(self.engine)
                else:
                    migrate.check_revision(self.engine)
        except DBAPIError as error:  # one the words do not know: still one line, without SQL or links
            self.engine.dispose()
            raise StoreError(f"cannot open the database: {in_words(error)}") from error
        except StoreError:
            self.engine.dispose()
            raise
        self._reader = sessionmaker(self.engine, expire_on_commit=False)
        self._writer = sessionmaker(
            self.engine.execution_options(**{WRITE_OPTION: True}), expire_on_commit=False
        )
        self._prepared: dict[Select[Any], PreparedRead] = {}
        self._listeners: list[ChangeListener] = []
        self._lock = threading.Lock()
        self._open = threading.local()
        self._identity = _identity(self._file)

    @property
    def is_sqlite(self) -> bool:
        """Whether this database is a SQLite file."""
        return is_sqlite(self.url)

    def subscribe(self, listener: ChangeListener) -> Callable[[], None]:
        """Call `listener` with the changes of every committed write in this process; returns unsubscribe."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    @contextmanager
    def read(self) -> Iterator[UnitOfWork]:
        """A read-only unit of work; inside a write on this thread, that write's (it sees its own changes)."""
        outer: UnitOfWork | None = getattr(self._open, "unit", None)
        if outer is not None:
            yield outer
            return
        self._check_file()
        with self._faults(), self._reader() as session, session.begin():
            yield UnitOfWork(session, writable=False)

    def fetch(self, statement: Select[Any], parameters: Mapping[str, Any]) -> Sequence[Sequence[Any]]:
        """The rows of one select run alone; inside a write on this thread, in that write (which it sees).

        One statement reads one consistent state: no session, no BEGIN and COMMIT around it, and the
        statement compiled once (`PreparedRead`), so `statement` is one built once, not per call.
        """
        outer: UnitOfWork | None = getattr(self._open, "unit", None)
        if outer is not None:
            return outer.execute(statement, parameters).all()
        prepared = self._prepared.get(statement)
        if prepared is None:
            prepared = self._prepared.setdefault(statement, PreparedRead(statement, self.engine.dialect))
        self._check_file()
        with self._faults():
            return prepared.rows(self.engine, parameters)

    @contextmanager
    def write(self) -> Iterator[UnitOfWork]:
        """A writing unit of work: all of it commits, or none of it.

        Inside another write on this thread it is a savepoint of that one: the outer unit commits
        everything or nothing, so several service calls can make one transaction.
        """
        outer: UnitOfWork | None = getattr(self._open, "unit", None)
        if outer is not None:
            with outer.session.begin_nested():
                yield outer
            return
        self._check_file()
        with self._faults(), self._writer() as session, session.begin():
            unit = UnitOfWork(session, writable=True)
            self._open.unit = unit
            try:
                yield unit
            finally:
                self._open.unit = None
            changes = unit.changes
            if changes:
                # One Core insert for the notices: the ORM's unit of work costs a write ~0.3 ms more.
                session.execute(
                    insert(_CHANGE_LOG),
                    [{"topic": change.topic, "entity_ids": list(change.ids)} for change in changes],
                )
            self._check_file()  # before the commit: a write to a removed file is acknowledged, then lost
        if changes:
            self._publish(changes)

    def _check_file(self) -> None:
        """Refuse to go on when the SQLite file was removed or replaced since it was opened."""
        if self._file is not None and _identity(self._file) != self._identity:
            raise StoreGoneError(
                f"the project's database {self._file} was removed or replaced while this process had it "
                "open; nothing was written. Restore the .ralph folder (or run `ralph-desk init`) and start "
                "again"
            )

    def _publish(self, changes: list[Change]) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(changes)
            except Exception:
                log.exception("change listener %r failed", listener)

    @contextmanager
    def _faults(self) -> Iterator[None]:
        """A driver's fault as the store's error in words (`errors.fault_of`); one it does not know as is."""
        try:
            yield
        except DBAPIError as error:
            message = str(error.orig)
            if (column := undecodable_column(message)) is not None:
                raise StoreDataError(undecodable_message(column)) from error
            folder = self._file.parent if self._file is not None else None
            fault = fault_of(message, self.busy_timeout_s, folder)
            if fault is None:
                raise
            raise fault from error

    def latest_change_id(self) -> int:
        """The id of the newest change-log row (0 when there is none)."""
        with self.read() as unit:
            return unit.session.scalar(select(func.coalesce(func.max(ChangeRow.id), 0))) or 0

    def changes_since(self, change_id: int, limit: int = 1000) -> tuple[int, list[Change]]:
        """Changes written (by any process) after `change_id`, and the newest id seen."""
        with self.read() as unit:
            rows = unit.session.scalars(
                select(ChangeRow).where(ChangeRow.id > change_id).order_by(ChangeRow.id).limit(limit)
            ).all()
        if not rows:
            return change_id, []
        known = [row for row in rows if row.topic in _KNOWN_TOPICS]  # a newer desk's topic: no pane reads it
        return rows[-1].id, [Change(ChangeTopic(row.topic), tuple(row.entity_ids)) for row in known]

    def require_sound(self) -> None:
        """Raise `StoreDamagedError` when SQLite's quick check finds the file damaged (others pass)."""
        if not self.is_sqlite:
            return
        with self._faults(), self.engine.connect() as connection:
            found = [str(row[0]) for row in connection.exec_driver_sql("PRAGMA quick_check(3)")]
        if found != ["ok"]:
            shown = " ".join("; ".join(found).split())
            raise StoreDamagedError(f"the database is damaged (integrity check: {shown}); {REPAIR}")

    def integrity_ok(self) -> bool:
        """Whether the database passes its integrity check (always true where there is none)."""
        if not self.is_sqlite:
            return True
        with self.engine.connect() as connection:
            result: Any = connection.execute(text("PRAGMA integrity_check")).scalar()
        return bool(result == "ok")

    def dispose(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()
