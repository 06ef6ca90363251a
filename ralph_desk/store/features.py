"""Feature and feature-learning queries."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy import bindparam, func, insert, select
from sqlalchemy import update as update_rows
from sqlalchemy.orm import selectinload

from ralph_desk.domain.enums import ChangeTopic
from ralph_desk.domain.listing import Listing
from ralph_desk.domain.records import Feature, FeatureLearning
from ralph_desk.store import mapping, named
from ralph_desk.store.database import UnitOfWork
from ralph_desk.store.readable import listing
from ralph_desk.store.schema import FeatureLearningRow, FeatureRow, TaskRow, utcnow
from ralph_desk.store.writes import FeatureWrite, LearningWrite, assign, checked


def _row(unit: UnitOfWork, name: str) -> FeatureRow | None:
    return unit.session.scalar(
        select(FeatureRow).where(FeatureRow.name == name).options(selectinload(FeatureRow.learnings))
    )


def names(unit: UnitOfWork) -> list[str]:
    """Every feature name, sorted."""
    return named.names(unit, FeatureRow)


def id_of(unit: UnitOfWork, name: str) -> int | None:
    """The id of a feature, by name."""
    return named.id_of(unit, FeatureRow, name)


def list_all(unit: UnitOfWork) -> Listing[Feature]:
    """Every feature, by name, without learnings."""

    def rows() -> Sequence[FeatureRow]:
        return unit.session.scalars(select(FeatureRow).order_by(FeatureRow.name)).all()

    return listing(unit.session, rows, mapping.feature, mapping.columns, lambda row: row.id, "feature")


def get(unit: UnitOfWork, name: str) -> Feature | None:
    """One feature with its learnings."""
    row = _row(unit, name)
    return mapping.feature(row, with_learnings=True) if row else None


def create(unit: UnitOfWork, fields: FeatureWrite) -> Feature:
    """Insert a feature."""
    row = FeatureRow(**checked(fields, FeatureWrite))
    unit.session.add(row)
    unit.session.flush()
    unit.touch(ChangeTopic.FEATURES, row.id)
    return mapping.feature(row)


def update(unit: UnitOfWork, name: str, fields: FeatureWrite) -> Feature | None:
    """Change a feature's fields."""
    row = _row(unit, name)
    if row is None:
        return None
    assign(row, fields, FeatureWrite)
    unit.session.flush()
    unit.touch(ChangeTopic.FEATURES, row.id)
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
    return named.delete(unit, _row(unit, name), ChangeTopic.FEATURES)


_LEARNINGS = FeatureLearningRow.metadata.tables[FeatureLearningRow.__tablename__]
_LEARNING = _LEARNINGS.c
_LEARNING_COLUMNS = (
    _LEARNING.id,
    _LEARNING.text,
    _LEARNING.source,
    _LEARNING.reason,
    _LEARNING.task_id,
    _LEARNING.hit_count,
    _LEARNING.created_at,
)
_LEARNINGS_OF = (
    select(*_LEARNING_COLUMNS).where(_LEARNING.feature_id == bindparam("feature_id")).order_by(_LEARNING.id)
)
_ADD_LEARNINGS = insert(_LEARNINGS).returning(_LEARNING.id, sort_by_parameter_order=True)
_BUMP_LEARNING = (
    update_rows(_LEARNINGS)
    .where(_LEARNING.id == bindparam("learning_id"))
    .values(hit_count=_LEARNING.hit_count + bindparam("more"))
)
# The batch functions below use Core statements: post-processing a session appends or bumps a dozen
# learnings at once, and the ORM's flushes and row loading were most of that time.


def learnings_of(unit: UnitOfWork, feature_id: int, name: str) -> list[FeatureLearning]:
    """A feature's learnings, oldest first, by the feature's id (`name` goes into the records)."""
    rows = unit.execute(_LEARNINGS_OF, {"feature_id": feature_id})
    return [mapping.learning(row._asdict(), name) for row in rows]


def add_learnings(
    unit: UnitOfWork, feature_id: int, name: str, items: Sequence[LearningWrite]
) -> list[FeatureLearning]:
    """Append learnings (text, source, reason, task_id, hit_count) to a feature; the records, in order."""
    if not items:
        return []
    now = utcnow()
    rows = [
        {"feature_id": feature_id, **checked(fields, LearningWrite), "created_at": now, "updated_at": now}
        for fields in items
    ]
    ids = list(unit.session.scalars(_ADD_LEARNINGS, rows))
    unit.touch(ChangeTopic.FEATURES, feature_id)
    unit.touch(ChangeTopic.LEARNINGS, *ids)
    return [
        mapping.learning({**row, "id": learning_id}, name) for learning_id, row in zip(ids, rows, strict=True)
    ]


def bump_learnings(unit: UnitOfWork, hits: Mapping[int, int]) -> None:
    """Raise the hit counts of learnings (id → how many more), in SQL so concurrent raises add up."""
    if not hits:
        return
    unit.execute(
        _BUMP_LEARNING, [{"learning_id": learning_id, "more": more} for learning_id, more in hits.items()]
    )
    unit.touch(ChangeTopic.LEARNINGS, *hits)


def get_learning(unit: UnitOfWork, learning_id: int) -> FeatureLearning | None:
    """One learning, by id."""
    row = unit.session.get(FeatureLearningRow, learning_id)
    return mapping.learning(mapping.columns(row), row.feature.name) if row else None


def update_learning(unit: UnitOfWork, learning_id: int, fields: LearningWrite) -> FeatureLearning | None:
    """Change a learning's text, reason or hit count."""
    row = unit.session.get(FeatureLearningRow, learning_id)
    if row is None:
        return None
    assign(row, fields, LearningWrite)
    unit.session.flush()
    unit.touch(ChangeTopic.LEARNINGS, row.id)
    return mapping.learning(mapping.columns(row), row.feature.name)


def delete_learning(unit: UnitOfWork, learning_id: int) -> bool:
    """Remove a learning."""
    row = unit.session.get(FeatureLearningRow, learning_id)
    if row is None:
        return False
    unit.session.delete(row)
    unit.session.flush()
    unit.touch(ChangeTopic.LEARNINGS, learning_id)
    return True


def count(unit: UnitOfWork) -> int:
    """How many features there are."""
    return unit.session.scalar(select(func.count(FeatureRow.id))) or 0
