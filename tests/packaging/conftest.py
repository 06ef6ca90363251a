"""Fixtures of the packaging tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture
def postgres_db() -> Iterator[str]:
    """A new, empty database on the PostgreSQL test server (skipped when there is none)."""
    server = pytest.importorskip("tests.postgres.server")
    if server.admin_url() is None:
        pytest.skip(f"no PostgreSQL test server (${server.ADMIN_URL_ENV})")
    url: str = server.create_database()
    try:
        yield url
    finally:
        server.drop_database(url)
