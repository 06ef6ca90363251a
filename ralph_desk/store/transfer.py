"""Copy a project's database to another URL (SQLite ↔ PostgreSQL) row for row, and prove the copy.

The source is read in one snapshot; the target gets the schema at head (through the migrations) and
then every row of every table in one transaction, ids preserved, PostgreSQL's id sequences moved
past the copied ids. Before that transaction commits, each table's row count and content hash are
compared with the source's; a difference rolls the whole copy back. A target that already holds
rows is refused unless `force` (then its rows are replaced, in the same transaction).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, Integer, Table, func, inspect, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, SQLAlchemyError

from ralph_desk.store import migrate
from ralph_desk.store.engine import WRITE_OPTION, create_db_engine
from ralph_desk.store.errors import in_words
from ralph_desk.store.health import redacted
from ralph_desk.store.schema import Base
from ralph_desk.store.urls import is_sqlite

VERSION_TABLE = "alembic_version"
BATCH_ROWS = 500


class TransferError(RuntimeError):
    """The copy could not be made; nothing was written to the target's data."""


class TransferRequestError(TransferError):
    """The request itself is wrong (a malformed URL, the same database twice, a missing file)."""


@dataclass(frozen=True)
class TableCheck:
    """One table's row count and content hash, in the source and in the target."""

    table: str
    source_rows: int
    target_rows: int
    source_hash: str
    target_hash: str

    @property
    def ok(self) -> bool:
        return self.source_rows == self.target_rows and self.source_hash == self.target_hash


@dataclass(frozen=True)
class TransferReport:
    """What was copied where, table by table, and which id sequences were moved on."""

    source: str
    target: str
    tables: tuple[TableCheck, ...]
    sequences_reset: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return all(check.ok for check in self.tables)

    @property
    def rows(self) -> int:
        return sum(check.target_rows for check in self.tables)


class TransferMismatchError(TransferError):
    """The copied rows did not match the source's; the copy was rolled back."""

    def __init__(self, report: TransferReport, message: str) -> None:
        super().__init__(message)
        self.report = report


def shown(url: str) -> str:
    """A URL fit to print: its password hidden."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):
        return redacted(url)


def tables() -> list[Table]:
    """Every table of the schema, parents before the tables that refer to them."""
    return list(Base.metadata.sorted_tables)


# --- content hashes ------------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return {"datetime": value.isoformat()}
    if isinstance(value, bytes):
        return {"bytes": value.hex()}
    raise TypeError(f"cannot hash a {type(value).__name__}")


def row_text(row: dict[str, Any]) -> str:
    """One row as canonical JSON: the same text for the same values on every backend."""
    return json.dumps(row, sort_keys=True, default=_plain, ensure_ascii=False, separators=(",", ":"))


def table_digest(connection: Connection, table: Table) -> tuple[int, str]:
    """A table's row count and the SHA-256 of its rows' canonical texts (in sorted order).

    The rows are sorted here rather than by the database, so that collations cannot reorder them.
    """
    lines = sorted(row_text(dict(row)) for row in connection.execute(select(table)).mappings())
    digest = hashlib.sha256()
    for line in lines:
        digest.update(line.encode("utf-8"))
        digest.update(b"\n")
    return len(lines), digest.hexdigest()


# --- opening both ends ---------------------------------------------------------------------------


def _reason(error: BaseException) -> str:
    return in_words(getattr(error, "orig", None) or error)


def _engine(url: str, role: str) -> Engine:
    try:
        make_url(url)
        return create_db_engine(url)
    except (ArgumentError, ValueError) as error:
        raise TransferRequestError(f"the {role} {shown(url)!r} is not a database URL: {error}") from None
    except NoSuchModuleError as error:
        raise TransferRequestError(
            f"the {role} {shown(url)} needs a driver this install lacks: {error}"
        ) from None


def _reach(engine: Engine, url: str, role: str) -> None:
    try:
        with engine.connect():
            pass
    except (DBAPIError, SQLAlchemyError, OSError) as error:
        raise TransferError(f"cannot reach the {role} database {shown(url)}: {_reason(error)}") from None


def _sqlite_file(url: str) -> Path | None:
    database = make_url(url).database
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    return Path(database)


@contextmanager
def _opening(engine: Engine, url: str, role: str) -> Iterator[None]:
    """Dispose of `engine` if opening fails; a newer schema or a database error becomes a TransferError."""
    try:
        yield
    except migrate.SchemaTooNewError as error:
        engine.dispose()
        raise TransferError(f"the {role} {shown(url)}: {error}") from None
    except SQLAlchemyError as error:
        engine.dispose()
        raise TransferError(f"cannot open the {role} database {shown(url)}: {_reason(error)}") from None
    except BaseException:
        engine.dispose()
        raise


def _open_source(url: str) -> Engine:
    if is_sqlite(url):
        file = _sqlite_file(url)
        if file is None:
            raise TransferRequestError(f"the source {shown(url)!r} names no SQLite file to copy from")
        if not file.is_file():
            raise TransferRequestError(f"the source {file} does not exist (no SQLite database there)")
    engine = _engine(url, "source")
    with _opening(engine, url, "source"):
        _reach(engine, url, "source")
        if migrate.check_revision(engine) is None:
            raise TransferRequestError(f"the source {shown(url)} holds no ralph-desk database (no schema)")
        migrate.upgrade(engine)  # as every command does on opening: the copy is of the schema at head
    return engine


def _open_target(url: str) -> Engine:
    engine = _engine(url, "target")
    with _opening(engine, url, "target"):
        _reach(engine, url, "target")
        ours = {table.name for table in tables()} | {VERSION_TABLE}
        foreign = sorted(set(inspect(engine).get_table_names()) - ours)
        if foreign:
            raise TransferError(
                f"the target {shown(url)} holds tables that are not ralph-desk's ({', '.join(foreign)}); "
                "copy into an empty database"
            )
        migrate.upgrade(engine)  # creates the schema on an empty target
    return engine


@contextmanager
def _snapshot(engine: Engine) -> Iterator[Connection]:
    """A connection that reads the source as of one moment."""
    connection = engine.connect()
    try:
        if engine.dialect.name == "postgresql":
            connection = connection.execution_options(isolation_level="REPEATABLE READ")
        with connection.begin():
            yield connection
    finally:
        connection.close()


# --- the copy ------------------------------------------------------------------------------------


def _row_counts(connection: Connection) -> dict[str, int]:
    return {table.name: connection.scalar(select(func.count()).select_from(table)) or 0 for table in tables()}


def _copy_table(source: Connection, target: Connection, table: Table) -> None:
    rows = source.execution_options(stream_results=True, yield_per=BATCH_ROWS).execute(select(table))
    for batch in rows.mappings().partitions(BATCH_ROWS):
        target.execute(table.insert(), [dict(row) for row in batch])


def _reset_sequences(target: Connection) -> list[str]:
    """Move each serial id's sequence past the largest copied id (PostgreSQL; SQLite needs nothing)."""
    if target.dialect.name != "postgresql":
        return []
    reset = []
    for table in tables():
        key = list(table.primary_key.columns)
        if len(key) != 1 or not isinstance(key[0].type, Integer):
            continue
        sequence = target.scalar(
            text("SELECT pg_get_serial_sequence(:table, :column)"),
            {
                "table": table.name,
                "column": key[0].name,
            },
        )
        if sequence is None:
            continue
        largest = target.scalar(select(func.coalesce(func.max(key[0]), 0))) or 0
        target.execute(
            text("SELECT setval(:sequence, :next, false)"), {"sequence": sequence, "next": largest + 1}
        )
        reset.append(table.name)
    return reset


def copy_database(
    source_url: str,
    target_url: str,
    force: bool = False,
) -> TransferReport:
    """Copy every row of the database at `source_url` into the one at `target_url`, and check it."""
    for role, url in (("source", source_url), ("target", target_url)):
        try:
            make_url(url)
        except ArgumentError:
            raise TransferRequestError(
                f"the {role} {shown(url)!r} is not a database URL (e.g. sqlite:///PATH or "
                "postgresql+psycopg://USER@HOST/DATABASE, its password from PGPASSWORD or ~/.pgpass)"
            ) from None
    if _same(source_url, target_url):
        raise TransferRequestError("the source and the target are the same database")
    source = _open_source(source_url)
    try:
        target = _open_target(target_url)
        try:
            return _copy(source, target, source_url, target_url, force)
        finally:
            target.dispose()
    finally:
        source.dispose()


def _same(first: str, second: str) -> bool:
    try:
        if is_sqlite(first) and is_sqlite(second):
            one, other = _sqlite_file(first), _sqlite_file(second)
            return one is not None and other is not None and one.resolve() == other.resolve()
        return make_url(first) == make_url(second)
    except ArgumentError:
        return False


def _copy(source: Engine, target: Engine, source_url: str, target_url: str, force: bool) -> TransferReport:
    writer = target.execution_options(**{WRITE_OPTION: True})
    try:
        with _snapshot(source) as read, writer.begin() as write:
            present = {name: count for name, count in _row_counts(write).items() if count}
            if present and not force:
                raise TransferError(
                    f"the target {shown(target_url)} already holds {sum(present.values())} rows "
                    f"(in {', '.join(present)}); pass --force to replace them"
                )
            for table in reversed(tables()):
                if table.name in present:
                    write.execute(table.delete())
            for table in tables():
                try:
                    _copy_table(read, write, table)
                except SQLAlchemyError as error:
                    raise TransferError(
                        f"copying {table.name} failed, so nothing was copied: {_reason(error)}"
                    ) from None
            sequences = _reset_sequences(write)
            checks = []
            for table in tables():
                source_rows, source_hash = table_digest(read, table)
                target_rows, target_hash = table_digest(write, table)
                checks.append(TableCheck(table.name, source_rows, target_rows, source_hash, target_hash))
            report = TransferReport(shown(source_url), shown(target_url), tuple(checks), tuple(sequences))
            if not report.ok:
                differing = ", ".join(check.table for check in checks if not check.ok)
                raise TransferMismatchError(report, f"the copy differs from the source in: {differing}")
    except TransferError:
        raise
    except SQLAlchemyError as error:
        raise TransferError(f"the copy failed, so nothing was copied: {_reason(error)}") from None
    return report


def report_lines(report: TransferReport) -> list[str]:
    """The comparison, table by table, as lines to print (hashes shortened to 16 hex digits)."""
    rows = [("table", "rows (source)", "rows (target)", "sha256 (source)", "sha256 (target)", "")]
    rows.extend(
        (
            check.table,
            str(check.source_rows),
            str(check.target_rows),
            check.source_hash[:16],
            check.target_hash[:16],
            "same" if check.ok else "DIFFERENT",
        )
        for check in report.tables
    )
    widths = [max(len(row[index]) for row in rows) for index in range(len(rows[0]))]
    return ["  " + "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows]
