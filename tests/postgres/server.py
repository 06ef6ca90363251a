"""The PostgreSQL server the tests create their databases on (`RALPH_DESK_TEST_POSTGRES_URL`)."""

from __future__ import annotations

import os
import uuid

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

ADMIN_URL_ENV = "RALPH_DESK_TEST_POSTGRES_URL"
BACKEND_ENV = "RALPH_TEST_DB"
PREFIX = "ralph_test_"


def admin_url() -> str | None:
    """The URL of a database on the test server that may create and drop others (None: no server)."""
    return os.environ.get(ADMIN_URL_ENV) or None


def url_of(database: str) -> str:
    """The URL of `database` on the test server."""
    admin = admin_url()
    assert admin is not None, f"{ADMIN_URL_ENV} is not set"
    return make_url(admin).set(database=database).render_as_string(hide_password=False)


def run_as_admin(statement: str) -> None:
    """Run one statement on the server's admin connection (autocommit)."""
    admin = admin_url()
    assert admin is not None, f"{ADMIN_URL_ENV} is not set"
    engine = create_engine(admin, isolation_level="AUTOCOMMIT", poolclass=NullPool)
    try:
        with engine.connect() as connection:
            connection.execute(text(statement))
    finally:
        engine.dispose()


def create_database(template: str | None = None) -> str:
    """A new database with a unique name (a copy of `template`, else empty); returns its URL."""
    name = f"{PREFIX}{uuid.uuid4().hex[:16]}"
    copy = f' TEMPLATE "{template}" STRATEGY FILE_COPY' if template else ""
    run_as_admin(f'CREATE DATABASE "{name}"{copy}')
    return url_of(name)


def drop_database(url: str) -> None:
    """Drop a database made by `create_database`, closing whatever connections are left to it."""
    name = make_url(url).database
    assert name is not None and name.startswith(PREFIX), f"not a test database: {name!r}"
    run_as_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
