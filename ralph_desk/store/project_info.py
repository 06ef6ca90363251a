"""The project row: one per database."""

from __future__ import annotations

from sqlalchemy import select

from ralph_desk.domain.enums import ChangeTopic
from ralph_desk.domain.records import Project
from ralph_desk.store import mapping
from ralph_desk.store.database import UnitOfWork
from ralph_desk.store.schema import ProjectRow


def _row(unit: UnitOfWork) -> ProjectRow | None:
    # Only one row is ever written; the lowest id wins should a foreign tool have added more.
    return unit.session.scalar(select(ProjectRow).order_by(ProjectRow.id).limit(1))


def get(unit: UnitOfWork) -> Project | None:
    """The project, if the database has one."""
    row = _row(unit)
    return mapping.project(row) if row is not None else None


def upsert(unit: UnitOfWork, title: str, description: str) -> Project:
    """Create the project row, or change its title and description."""
    row = _row(unit)
    if row is None:
        row = ProjectRow(title=title, description=description)
        unit.session.add(row)
    else:
        row.title = title
        row.description = description
    unit.session.flush()
    unit.touch(ChangeTopic.PROJECT, row.id)
    return mapping.project(row)
