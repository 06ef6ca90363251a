"""Engines for a database URL: SQLite with WAL, foreign keys and a busy timeout; any other URL as given."""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import stat
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

from ralph_desk.store.urls import is_sqlite

DEFAULT_BUSY_TIMEOUT_S = 15.0
PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
SQLITE_SUFFIXES = ("", "-wal", "-shm", "-journal")
WRITE_OPTION = "ralph_write"


def create_db_engine(url: str, busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S) -> Engine:
    """An engine for `url`; SQLite gets WAL, foreign keys, a busy timeout and BEGIN IMMEDIATE for writes."""
    if not is_sqlite(url):
        return create_engine(url, pool_pre_ping=True, connect_args=_lock_timeout(url, busy_timeout_s))
    parsed = make_url(url)
    if parsed.database and parsed.database != ":memory:":
        make_private(Path(parsed.database))
    engine = create_engine(
        url,
        connect_args={"timeout": busy_timeout_s, "check_same_thread": False},
        poolclass=NullPool if parsed.database in (None, "", ":memory:") else None,
    )
    _arm_sqlite(engine, busy_timeout_s)
    return engine


def make_private(db_file: Path) -> None:
    """Create the database file owner-only (0600) before SQLite does, in an owner-only folder when new.

    SQLite gives its `-wal`, `-shm` and journal files the mode of the database file, so they are born
    0600 too, whatever the umask; files of an older version made 0644 are narrowed.
    """
    if not db_file.parent.exists():
        db_file.parent.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    try:
        os.close(os.open(db_file, flags, PRIVATE_FILE_MODE))
    except FileExistsError:
        # An existing file is never opened here: closing any descriptor of a file drops every POSIX
        # lock this process holds on it, SQLite's too, and another process would then delete the WAL
        # this process still writes (`ralph_init(force)` in a server that has the database open).
        if db_file.is_symlink():
            raise OSError(
                errno.ELOOP, "the database file is a symbolic link; refused", str(db_file)
            ) from None
    if os.name != "posix":
        return
    for suffix in SQLITE_SUFFIXES:
        path = db_file.with_name(db_file.name + suffix)
        with contextlib.suppress(FileNotFoundError):
            found = path.lstat()
            if stat.S_ISREG(found.st_mode) and found.st_mode & 0o077:
                path.chmod(PRIVATE_FILE_MODE)


def _lock_timeout(url: str, busy_timeout_s: float) -> dict[str, Any]:
    """On PostgreSQL (libpq drivers), wait for another connection's lock no longer than the busy timeout."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "postgresql" or parsed.get_driver_name() not in ("psycopg", "psycopg2"):
        return {}
    given = parsed.query.get("options", ())
    words = [given] if isinstance(given, str) else list(given)
    return {"options": " ".join([*words, f"-c lock_timeout={int(busy_timeout_s * 1000)}"])}


def _arm_sqlite(engine: Engine, busy_timeout_s: float) -> None:
    """Set the pragmas on every connection and take the write lock up front for writing transactions."""

    @event.listens_for(engine, "connect")
    def on_connect(dbapi_connection: sqlite3.Connection, _record: Any) -> None:
        # pysqlite's own transaction handling would BEGIN lazily (DEFERRED); we emit BEGIN ourselves.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout_s * 1000)}")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def on_begin(connection: Any) -> None:
        # A deferred transaction that later writes can fail with "database is locked" without waiting;
        # taking the lock at BEGIN makes concurrent writers queue on the busy timeout instead.
        if connection.get_execution_options().get(WRITE_OPTION):
            connection.exec_driver_sql("BEGIN IMMEDIATE")
        else:
            connection.exec_driver_sql("BEGIN")
