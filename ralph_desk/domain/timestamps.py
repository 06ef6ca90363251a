"""Timestamps as results carry them: stored naive UTC made aware, so the wire says which zone it is."""

from __future__ import annotations

from datetime import UTC, datetime


def utc(moment: datetime) -> datetime:
    """A stored timestamp (naive UTC) as an aware UTC one."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def maybe_utc(moment: datetime | None) -> datetime | None:
    """`utc` for an optional timestamp."""
    return None if moment is None else utc(moment)
