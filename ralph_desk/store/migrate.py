"""Schema revisions: create a fresh database, upgrade an older one, refuse one newer than this code.

Alembic is imported only when a database has to be upgraded (or a caller asks for alembic itself):
it costs a few hundred milliseconds at start-up (it pulls in mako and pygments), and opening a
database that is already at head — every open but the first — needs none of it. The shipped
revisions are read from the migration files' `revision` / `down_revision` lines, with alembic's
own reading as the fallback for anything those lines do not settle.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Engine, inspect, text

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
VERSION_TABLE = "alembic_version"

_REVISION = re.compile(r"^revision(?:\s*:[^=]*)?\s*=\s*[\"']([^\"']+)[\"']\s*$", re.MULTILINE)
_DOWN_REVISION = re.compile(
    r"^down_revision(?:\s*:[^=]*)?\s*=\s*(None|[\"']([^\"']+)[\"'])\s*$", re.MULTILINE
)


class SchemaTooNewError(RuntimeError):
    """The database was written by a newer ralph_desk than this one."""


def _config(connection: Connection | None = None) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


@lru_cache(maxsize=1)
def _shipped() -> tuple[frozenset[str], str]:
    """Every shipped revision and the head, from the migration files (alembic when they are unusual)."""
    parents: dict[str, str | None] = {}
    for path in sorted((MIGRATIONS_DIR / "versions").glob("*.py")):
        source = path.read_text(encoding="utf-8")
        revision, down = _REVISION.findall(source), _DOWN_REVISION.findall(source)
        if len(revision) != 1 or len(down) != 1:
            return _shipped_by_alembic()
        parents[revision[0]] = down[0][1] or None
    heads = set(parents) - {parent for parent in parents.values() if parent is not None}
    if len(heads) != 1 or any(parent is not None and parent not in parents for parent in parents.values()):
        return _shipped_by_alembic()
    return frozenset(parents), heads.pop()


def _shipped_by_alembic() -> tuple[frozenset[str], str]:
    from alembic.script import ScriptDirectory

    scripts = ScriptDirectory.from_config(_config())
    head = scripts.get_current_head()
    assert head is not None, "no migrations shipped"
    return frozenset(script.revision for script in scripts.walk_revisions()), head


def head_revision() -> str:
    """The newest schema revision this code knows."""
    return _shipped()[1]


def known_revisions() -> set[str]:
    """Every schema revision this code knows."""
    return set(_shipped()[0])


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at (None for an empty database)."""
    with engine.connect() as connection:
        if not inspect(connection).has_table(VERSION_TABLE):
            return None
        rows = connection.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalars().all()
        if len(rows) <= 1:
            return rows[0] if rows else None
        from alembic.runtime.migration import MigrationContext  # several heads: alembic says why

        return MigrationContext.configure(connection).get_current_revision()


def check_revision(engine: Engine) -> str | None:
    """The database's revision, or SchemaTooNewError when this code does not know it."""
    revision = current_revision(engine)
    if revision is not None and revision not in known_revisions():
        raise SchemaTooNewError(
            f"the database is at schema revision {revision!r}, which this ralph-desk does not know "
            f"(newest known: {head_revision()!r}); it was written by a newer ralph-desk — upgrade "
            "ralph-desk to open it"
        )
    return revision


def upgrade(engine: Engine, target: str = "head") -> None:
    """Bring the database to `target` (creates every table on an empty database)."""
    revision = check_revision(engine)
    if target == "head" and revision is not None and revision == head_revision():
        return  # already there: no alembic needed
    from alembic import command

    with engine.connect() as connection, _foreign_keys_off(connection), connection.begin():
        command.upgrade(_config(connection), target)
        _check_foreign_keys(connection)


@contextmanager
def _foreign_keys_off(connection: Connection) -> Iterator[None]:
    """On SQLite, foreign keys off while a migration rebuilds a table (a dropped parent must not cascade)."""
    if connection.dialect.name != "sqlite":
        yield
        return
    # The pragma is a no-op inside a transaction: it is set on the raw connection before BEGIN.
    raw = connection.connection.driver_connection
    assert raw is not None
    raw.execute("PRAGMA foreign_keys=OFF")
    try:
        yield
    finally:
        raw.execute("PRAGMA foreign_keys=ON")


def _check_foreign_keys(connection: Connection) -> None:
    """Refuse (rolling back) a migration that left a row pointing at nothing."""
    if connection.dialect.name != "sqlite":
        return
    broken = connection.exec_driver_sql("PRAGMA foreign_key_check").all()
    if broken:
        raise RuntimeError(f"the schema upgrade left broken foreign keys: {broken[:5]}")


def needs_upgrade(engine: Engine) -> bool:
    """Whether the database is behind this code's newest revision."""
    return check_revision(engine) != head_revision()
