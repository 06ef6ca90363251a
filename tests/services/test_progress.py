"""Throughput: the tasks agents finished per hour, counted once per task by the database (both backends)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from ralph_desk.domain.totals import Rate
from ralph_desk.services.progress import ProgressService
from ralph_desk.services.sessions import SessionService
from ralph_desk.store.database import Database
from tests.services.conftest import Desk

START = datetime(2026, 3, 1, 8, 0, tzinfo=UTC)


def session(
    sessions: SessionService, name: str, task_id: int, start_min: int, end_min: int, outcome: str
) -> None:
    sessions.start_session(
        name, task_id, "task_execution", "claude", started_at=START + timedelta(minutes=start_min)
    )
    sessions.finish_session(name, ended_at=START + timedelta(minutes=end_min), outcome=outcome)


def test_without_sessions_there_is_no_rate(db: Database) -> None:
    throughput = ProgressService(db).totals().throughput

    assert throughput.recent == throughput.overall == Rate()
    assert throughput.overall.per_hour is None


def test_a_task_counts_once_when_a_session_of_it_ends_done_within_the_span(db: Database, desk: Desk) -> None:
    sessions = SessionService(db)
    draw, label, colour = desk.task("Draw"), desk.task("Label"), desk.task("Colour")
    session(sessions, "a", draw.id, 0, 30, "done")  # 08:00-08:30, before the last 3 h
    session(sessions, "b", label.id, 60, 90, "stuck")
    session(sessions, "c", label.id, 200, 240, "done")  # 11:20-12:00
    session(sessions, "d", draw.id, 250, 280, "done")  # draw again (changes requested): counted once
    session(sessions, "e", colour.id, 290, 300, "needs_input")  # the last end: 13:00
    sessions.start_session(
        "f", colour.id, "task_execution", "claude", started_at=START + timedelta(minutes=310)
    )

    throughput = ProgressService(db).totals().throughput

    assert throughput.window_hours == 3.0
    assert throughput.overall == Rate(2, 5.0)  # draw and label, from 08:00 to 13:00
    assert throughput.recent == Rate(2, 3.0)  # label's and draw's second done end after 10:00
    assert throughput.overall.per_hour == pytest.approx(0.4)
