"""A write held up by another connection's lock on PostgreSQL fails as busy after the busy timeout,
as it does on SQLite, instead of waiting for ever."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

from ralph_desk.services.features import FeatureService
from ralph_desk.store.database import Database
from ralph_desk.store.errors import StoreBusyError


@pytest.mark.timeout(60)
def test_a_write_waiting_on_another_connections_lock_fails_as_busy_then_succeeds_once_it_is_free(
    pg_url: str,
) -> None:
    impatient = Database(pg_url, busy_timeout_s=0.2)
    features = FeatureService(impatient)
    features.create("charts", "Charts")
    other = create_engine(pg_url, poolclass=NullPool)
    try:
        with other.connect() as holder:
            holder.execute(text("LOCK TABLE features IN EXCLUSIVE MODE"))

            with pytest.raises(StoreBusyError, match=r"busy timeout \(0\.2 s\).*nothing was written"):
                features.create("tides", "Tides")

            assert [feature.name for feature in features.list()] == ["charts"]  # reads go on
            holder.rollback()
        features.create("tides", "Tides")
        assert [feature.name for feature in features.list()] == ["charts", "tides"]
    finally:
        other.dispose()
        impatient.dispose()
