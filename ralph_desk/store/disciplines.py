"""Discipline queries."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import func, select

from ralph_desk.domain.enums import ChangeTopic
from ralph_desk.domain.listing import Listing
from ralph_desk.domain.records import Discipline
from ralph_desk.store import mapping, named
from ralph_desk.store.database import UnitOfWork
from ralph_desk.store.readable import listing
from ralph_desk.store.schema import DisciplineRow, TaskRow
from ralph_desk.store.writes import DisciplineWrite, assign, checked


def _row(unit: UnitOfWork, name: str) -> DisciplineRow | None:
    return unit.session.scalar(select(DisciplineRow).where(DisciplineRow.name == name))


def names(unit: UnitOfWork) -> list[str]:
    """Every discipline name, sorted."""
    return named.names(unit, DisciplineRow)


def id_of(unit: UnitOfWork, name: str) -> int | None:
    """The id of a discipline, by name."""
    return named.id_of(unit, DisciplineRow, name)


def list_all(unit: UnitOfWork) -> Listing[Discipline]:
    """Every discipline, by name."""

    def rows() -> Sequence[DisciplineRow]:
        return unit.session.scalars(select(DisciplineRow).order_by(DisciplineRow.name)).all()

    return listing(unit.session, rows, mapping.discipline, mapping.columns, lambda row: row.id, "discipline")


def get(unit: UnitOfWork, name: str) -> Discipline | None:
    """One discipline."""
    row = _row(unit, name)
    return mapping.discipline(row) if row else None


def create(unit: UnitOfWork, fields: DisciplineWrite) -> Discipline:
    """Insert a discipline."""
    row = DisciplineRow(**checked(fields, DisciplineWrite))
    unit.session.add(row)
    unit.session.flush()
    unit.touch(ChangeTopic.DISCIPLINES, row.id)
    return mapping.discipline(row)


def update(unit: UnitOfWork, name: str, fields: DisciplineWrite) -> Discipline | None:
    """Change a discipline's fields (JSON fields are replaced whole)."""
    row = _row(unit, name)
    if row is None:
        return None
    assign(row, fields, DisciplineWrite)
    unit.session.flush()
    unit.touch(ChangeTopic.DISCIPLINES, row.id)
    return mapping.discipline(row)


def tasks_using(unit: UnitOfWork, name: str, limit: int = 20) -> list[int]:
    """Ids of tasks assigned to a discipline (the first `limit`)."""
    return list(
        unit.session.scalars(
            select(TaskRow.id)
            .join(DisciplineRow, TaskRow.discipline_id == DisciplineRow.id)
            .where(DisciplineRow.name == name)
            .order_by(TaskRow.id)
            .limit(limit)
        )
    )


def delete(unit: UnitOfWork, name: str) -> bool:
    """Remove a discipline (the caller checks that no task uses it)."""
    return named.delete(unit, _row(unit, name), ChangeTopic.DISCIPLINES)


def count(unit: UnitOfWork) -> int:
    """How many disciplines there are."""
    return unit.session.scalar(select(func.count(DisciplineRow.id))) or 0
