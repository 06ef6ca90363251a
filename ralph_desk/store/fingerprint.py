"""A hash of the database content agents' work changes, for the loop's stagnation check."""

from __future__ import annotations

import hashlib
import json
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import Table, select

from ralph_desk.store.database import UnitOfWork
from ralph_desk.store.readable import lenient_text
from ralph_desk.store.schema import Base

CONTENT_TABLE_NAMES = (
    "project",
    "features",
    "feature_learnings",
    "disciplines",
    "tasks",
    "task_dependencies",
    "task_comments",
)
"""The tables whose content is the project: what agents' work changes."""

BOOKKEEPING_TABLE_NAMES = (
    "task_signals",
    "agent_sessions",
    "loop_runs",
    "change_log",
    "review_comments",
    "merge_queue",
    "task_branches",
    "branch_adoptions",
    "check_runs",
    "companion_devices",
    "companion_codes",
    "alembic_version",
)
"""Left out, so that a session that only signalled (and was recorded) counts as changing nothing."""


def _content_tables() -> list[Table]:
    return [Base.metadata.tables[name] for name in CONTENT_TABLE_NAMES]


def _plain(value: Any) -> Any:
    """A column value as JSON can spell it the same way on every backend."""
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    return value


def content_fingerprint(unit: UnitOfWork) -> str:
    """sha256 over every row of the content tables, each table in primary-key order (text that is not
    UTF-8, written by another tool, hashed as it is: one bad row must not stop the loop)."""
    digest = hashlib.sha256()
    with lenient_text(unit.session):
        for table in _content_tables():
            _hash_table(unit, table, digest)
    return digest.hexdigest()


def _hash_table(unit: UnitOfWork, table: Table, digest: Any) -> None:
    digest.update(f"\0table {table.name}\n".encode())
    statement = select(*table.columns).order_by(*table.primary_key.columns)
    for row in unit.session.execute(statement):
        line = json.dumps([_plain(value) for value in row], sort_keys=True, default=str)
        digest.update(line.encode("utf-8") + b"\n")
