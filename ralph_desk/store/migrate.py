"""Schema revisions: create a fresh database, upgrade an older one, refuse one newer than this code."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine

MIGRATIONS_DIR = Path(__file__).with_name("migrations")


class SchemaTooNewError(RuntimeError):
    """The database was written by a newer ralph_desk than this one."""


def _config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    """The newest schema revision this code knows."""
    head = ScriptDirectory.from_config(_config()).get_current_head()
    assert head is not None, "no migrations shipped"
    return head


def known_revisions() -> set[str]:
    """Every schema revision this code knows."""
    return {script.revision for script in ScriptDirectory.from_config(_config()).walk_revisions()}


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at (None for an empty database)."""
    with engine.connect() as connection:
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
    check_revision(engine)
    with engine.begin() as connection:
        command.upgrade(_config(connection), target)


def needs_upgrade(engine: Engine) -> bool:
    """Whether the database is behind this code's newest revision."""
    return check_revision(engine) != head_revision()
