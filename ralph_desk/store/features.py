"""Feature and feature-learning queries."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import selectinload

from ralph_desk.domain.records import Feature, FeatureLearning
from ralph_desk.store import mapping
from ralph_desk.store.database import UnitOfWork
from ralph_desk.store.schema import FeatureLearningRow, FeatureRow, TaskRow


def _row(unit: UnitOfWork, name: str) -> FeatureRow | None:
    return unit.session.scalar(
        select(FeatureRow).where(FeatureRow.name == name).options(selectinload(FeatureRow.learnings))
    )


def names(unit: UnitOfWork) -> list[str]:
    """Every feature name, sorted."""
    return list(unit.session.scalars(select(FeatureRow.name).order_by(FeatureRow.name)))


def id_of(unit: UnitOfWork, name: str) -> int | None:
    """The id of a feature, by name."""
    return unit.session.scalar(select(FeatureRow.id).where(FeatureRow.name == name))


def list_all(unit: UnitOfWork) -> list[Feature]:
    """Every feature, by name, without learnings."""
    rows = unit.session.scalars(select(FeatureRow).order_by(FeatureRow.name))
    return [mapping.feature(row) for row in rows]


def get(unit: UnitOfWork, name: str) -> Feature | None:
    """One feature with its learnings."""
    row = _row(unit, name)
    return mapping.feature(row, with_learnings=True) if row else None


def create(unit: UnitOfWork, fields: dict[str, Any]) -> Feature:
    """Insert a feature."""
    row = FeatureRow(**fields)
    unit.session.add(row)
    unit.session.flush()
    unit.touch("features", row.id)
    return mapping.feature(row)


def update(unit: UnitOfWork, name: str, fields: dict[str, Any]) -> Feature | None:
    """Change a feature's fields."""
    row = _row(unit, name)
    if row is None:
        return None
    for key, value in fields.items():
        setattr(row, key, value)
    unit.session.flush()
    unit.touch("features", row.id)
    return mapping.feature(row, with_learnings=True)


def tasks_using(unit: UnitOfWork, name: str, limit: int = 20) -> list[int]:
    """Ids of tasks in a feature."""
    return list(
        unit.session.scalars(
            select(TaskRow.id)
            .join(FeatureRow)
            .where(FeatureRow.name == name)
            .order_by(TaskRow.id)
            .limit(limit)
        )
    )


def delete(unit: UnitOfWork, name: str) -> bool:
    """Remove a feature (the caller checks that no task uses it)."""
    row = _row(unit, name)
    if row is None:
        return False
    unit.session.delete(row)
    unit.session.flush()
    unit.touch("features", row.id)
    return True


def learnings(unit: UnitOfWork, name: str) -> list[FeatureLearning]:
    """A feature's learnings, oldest first."""
    row = _row(unit, name)
    return [mapping.learning(item, name) for item in row.learnings] if row else []


def add_learning(unit: UnitOfWork, name: str, fields: dict[str, Any]) -> FeatureLearning:
    """Append a learning to a feature."""
    row = _row(unit, name)
    assert row is not None
    learning = FeatureLearningRow(feature_id=row.id, **fields)
    unit.session.add(learning)
    unit.session.flush()
    unit.touch("features", row.id)
    unit.touch("learnings", learning.id)
    return mapping.learning(learning, name)


def bump_learning(unit: UnitOfWork, learning_id: int) -> FeatureLearning | None:
    """Raise a learning's hit count by one."""
    row = unit.session.get(FeatureLearningRow, learning_id)
    if row is None:
        return None
    row.hit_count = row.hit_count + 1
    unit.session.flush()
    unit.touch("learnings", row.id)
    return mapping.learning(row, row.feature.name)


def get_learning(unit: UnitOfWork, learning_id: int) -> FeatureLearning | None:
    """One learning, by id."""
    row = unit.session.get(FeatureLearningRow, learning_id)
    return mapping.learning(row, row.feature.name) if row else None


def update_learning(unit: UnitOfWork, learning_id: int, fields: dict[str, Any]) -> FeatureLearning | None:
    """Change a learning's text, reason or hit count."""
    row = unit.session.get(FeatureLearningRow, learning_id)
    if row is None:
        return None
    for key, value in fields.items():
        setattr(row, key, value)
    unit.session.flush()
    unit.touch("learnings", row.id)
    return mapping.learning(row, row.feature.name)


def delete_learning(unit: UnitOfWork, learning_id: int) -> bool:
    """Remove a learning."""
    row = unit.session.get(FeatureLearningRow, learning_id)
    if row is None:
        return False
    unit.session.delete(row)
    unit.session.flush()
    unit.touch("learnings", learning_id)
    return True


def count(unit: UnitOfWork) -> int:
    """How many features there are."""
    return unit.session.scalar(select(func.count(FeatureRow.id))) or 0
