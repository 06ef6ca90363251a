"""The change feed: what any process writes reaches the window once, within a poll."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from ralph_desk.domain.lifecycle import Mover
from ralph_desk.domain.records import Change
from ralph_desk.gui.live import FAILING_INTERVAL_MS, ChangeFeed
from ralph_desk.gui.worker import Worker
from ralph_desk.project import ProjectPaths
from ralph_desk.services.container import Services
from tests.support.demo_rows import task_id

CHART = "Mark high and low water on the chart"


@pytest.fixture
def feed(qtbot: QtBot, services: Services) -> Iterator[ChangeFeed]:
    """A running feed over the demo database, read on a worker of its own."""
    worker = Worker()
    running = ChangeFeed(services.db, worker, interval_ms=50)
    running.start()
    qtbot.waitUntil(lambda: running.running, timeout=1000)
    yield running
    running.stop()
    worker.shutdown()


def test_a_write_in_this_process_is_reported_at_once_with_its_topics(
    qtbot: QtBot, feed: ChangeFeed, services: Services
) -> None:
    with qtbot.waitSignal(feed.sig_changed, timeout=1000) as blocker:
        services.comments.add(task_id(services, "Find the times of high and low water"), "human", "A note")

    assert blocker.args == [{"comments", "tasks"}]


def test_a_write_by_another_connection_is_found_by_polling(
    qtbot: QtBot, feed: ChangeFeed, project: Path, services: Services
) -> None:
    chart = task_id(services, CHART)
    other = Services.open(ProjectPaths.at(project))
    try:
        with qtbot.waitSignal(feed.sig_changes, timeout=2000) as blocker:
            other.tasks.move(chart, "blocked", Mover.IMPORT)
    finally:
        other.close()

    changes: list[Change] = blocker.args[0]
    assert Change("tasks", (chart,)) in changes


def test_each_change_is_reported_once(qtbot: QtBot, feed: ChangeFeed, services: Services) -> None:
    seen: list[Change] = []
    feed.sig_changes.connect(seen.extend)
    chart = task_id(services, CHART)

    services.tasks.move(chart, "blocked", Mover.IMPORT)
    services.tasks.move(chart, "pending", Mover.IMPORT)
    qtbot.waitUntil(lambda: len(seen) >= 2, timeout=1000)
    polls = feed.polls
    qtbot.waitUntil(lambda: feed.polls >= polls + 3, timeout=1000)

    assert seen == [Change("tasks", (chart,)), Change("tasks", (chart,))]


def test_a_failing_poll_says_so_slows_down_and_recovers(
    qtbot: QtBot, feed: ChangeFeed, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    health: list[tuple[bool, str]] = []
    feed.sig_health.connect(lambda ok, text: health.append((ok, text)))

    def broken(_change_id: int) -> tuple[int, list[Change]]:
        raise RuntimeError("disk unplugged")

    monkeypatch.setattr(services.db, "changes_since", broken)
    with qtbot.waitSignal(feed.sig_health, timeout=1000):
        feed.poll()
    assert health == [(False, "live updates failing: disk unplugged")]
    assert feed._timer.interval() == FAILING_INTERVAL_MS

    monkeypatch.undo()
    with qtbot.waitSignal(feed.sig_health, timeout=1000):
        feed.poll()
    assert health[-1][0] is True and feed.healthy
    assert feed._timer.interval() == 50
