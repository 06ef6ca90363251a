"""What the tables of named records (features, disciplines) share: names, ids by name, removal."""

from __future__ import annotations

from sqlalchemy import select

from ralph_desk.domain.enums import ChangeTopic
from ralph_desk.store.database import UnitOfWork
from ralph_desk.store.schema import DisciplineRow, FeatureRow

NamedRow = DisciplineRow | FeatureRow


def names(unit: UnitOfWork, table: type[NamedRow]) -> list[str]:
    """Every name in the table, sorted."""
    return list(unit.session.scalars(select(table.name).order_by(table.name)))


def id_of(unit: UnitOfWork, table: type[NamedRow], name: str) -> int | None:
    """The id of the row of this name."""
    return unit.session.scalar(select(table.id).where(table.name == name))


def delete(unit: UnitOfWork, row: NamedRow | None, topic: ChangeTopic) -> bool:
    """Remove the row (False when there is none) and note the change under `topic`."""
    if row is None:
        return False
    unit.session.delete(row)
    unit.session.flush()
    unit.touch(topic, row.id)
    return True
