"""Live across machines: what another process writes to a PostgreSQL database reaches this one
through the change log (the window's feed polls `changes_since`), within a bounded wait."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from ralph_desk.domain.records import Change
from ralph_desk.gui.live import ChangeFeed
from ralph_desk.gui.worker import Worker
from ralph_desk.project import init_project
from ralph_desk.services.container import Services

FEED_WAIT_MS = 10_000


@pytest.fixture
def services(pg_url: str, tmp_path: Path) -> Iterator[Services]:
    """A project on PostgreSQL with a suggested draft task (#1) and a pending one (#2)."""
    paths = init_project(tmp_path / "harbour", title="Harbour", db_url=pg_url)
    opened = Services.open(paths, pg_url)
    opened.features.create("charts", "Charts")
    opened.disciplines.create("frontend", "Frontend", "code", "#3b82f6")
    opened.tasks.create("charts", "frontend", "Draw the tide chart")
    opened.signals.record(1, "s-1", "suggest", what="Add a legend", why="Lines look alike.", kind="new_task")
    suggestion = opened.inbox.suggestions()[0]
    opened.inbox.create_suggested_task(suggestion.id)
    yield opened
    opened.close()


def other_machine(services: Services, *command: str) -> subprocess.Popen[str]:
    """A `ralph-desk` command in another process, on the same database."""
    argv = [sys.executable, "-m", "ralph_desk", *command, "--root", str(services.paths.root)]
    return subprocess.Popen(
        [*argv, "--db-url", services.db.url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def succeeded(process: subprocess.Popen[str]) -> None:
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, out + err


def test_a_write_by_another_process_on_postgresql_is_in_the_change_log_once_it_commits(
    services: Services,
) -> None:
    draft = services.tasks.list(status="draft")[0]
    before = services.db.latest_change_id()

    succeeded(other_machine(services, "approve", str(draft.id)))
    newest, changes = services.db.changes_since(before)

    assert Change("tasks", (draft.id,)) in changes
    assert newest == services.db.latest_change_id() > before
    assert services.db.changes_since(newest) == (newest, [])


def test_the_window_feed_on_postgresql_shows_another_process_write_within_a_bounded_wait(
    qtbot: QtBot, services: Services
) -> None:
    worker = Worker()  # the feed reads the change log on the window's worker, off the GUI thread
    feed = ChangeFeed(services.db, worker, interval_ms=50)
    feed.start()
    try:
        with qtbot.waitSignal(feed.sig_changes, timeout=FEED_WAIT_MS) as heard:
            writer = other_machine(services, "reject", "2", "--reason", "Out of scope")
        succeeded(writer)
        changes: list[Change] = heard.args[0]
        assert Change("tasks", (2,)) in changes
        assert services.tasks.get(2).status.value == "skipped"
    finally:
        feed.stop()
        worker.shutdown()
