"""Fixtures of the hardening tests: a seeded project per test."""

from __future__ import annotations

from pathlib import Path

import pytest

from ralph_desk.project import ProjectPaths
from tests.hardening.support import Seeded, seed_project


def pytest_configure(config: pytest.Config) -> None:
    # Also registered by tests/conftest.py; repeated here so that these modules stand on their own.
    config.addinivalue_line("markers", "sqlite_only: about the SQLite file itself; skipped on PostgreSQL")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def seeded(tmp_path: Path) -> tuple[ProjectPaths, Seeded]:
    """The seeded project (see `seed_project`) in the test's folder."""
    return seed_project(tmp_path / "proj")
