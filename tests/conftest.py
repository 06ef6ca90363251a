"""Shared fixtures: a fresh migrated database per test and a service of each kind over it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ralph_desk.services.comments import CommentService
from ralph_desk.services.disciplines import DisciplineService
from ralph_desk.services.features import FeatureService
from ralph_desk.services.tasks import TaskService
from ralph_desk.store.database import Database
from ralph_desk.store.engine import sqlite_url


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """Where the test's SQLite database file lives."""
    return tmp_path / "ralph.db"


@pytest.fixture
def db(db_path: Path) -> Iterator[Database]:
    """A fresh, migrated SQLite database in the test's temporary folder."""
    database = Database(sqlite_url(db_path))
    yield database
    database.dispose()


@pytest.fixture
def features(db: Database) -> FeatureService:
    return FeatureService(db)


@pytest.fixture
def disciplines(db: Database) -> DisciplineService:
    return DisciplineService(db)


@pytest.fixture
def tasks(db: Database) -> TaskService:
    return TaskService(db)


@pytest.fixture
def comments(db: Database) -> CommentService:
    return CommentService(db)
