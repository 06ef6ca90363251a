"""The README's staged pictures agree with themselves: the running sessions match the settings shown."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.panes.inbox.failed import FailedCard
from ralph_desk.gui.panes.inbox.reviews.rows import RowKind
from ralph_desk.services.container import Services
from tests.gui.conftest import settle

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "screenshots.py"


def _screenshots() -> ModuleType:
    spec = importlib.util.spec_from_file_location("screenshots_script", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses in the script look their module up
    spec.loader.exec_module(module)
    return module


def test_the_staged_sessions_run_as_the_form_says_and_leave_the_settings_as_they_were(
    qtbot: QtBot, window: MainWindow
) -> None:
    scenes = _screenshots().SCENES
    settle(qtbot, window)
    form, sessions = window.loop.settings, window.loop.sessions
    saved = form.values()

    scenes["loop-sessions"](window)
    rows = sessions.rows

    assert len(rows) == form.parallel.value() == 3
    assert {row.agent for row in rows} == {form.agent.currentData()}
    assert not form.dirty  # the staged settings are shown, not an edit waiting to be saved
    scenes["loop"](window)
    assert form.values() == saved and not form.dirty and sessions.rows == []


def test_the_reviews_picture_at_1024_by_640_shows_the_failing_checks_output_and_a_gap_without_growing(
    qtbot: QtBot, window: MainWindow, services: Services, project: Path
) -> None:
    script = _screenshots()
    script._put_work_in_review(project, services)
    small = QSize(1024, 640)
    window.resize(small)
    qtbot.waitUntil(lambda: window.size() == small)

    script.SCENES["inbox-reviews"](window)
    QApplication.processEvents()

    detail = window.inbox.reviews.detail
    assert detail.checks.output.isVisible() and "FAILED" in detail.checks.output.text()
    rows = detail.diff.model.layout.rows
    assert any(row.kind is RowKind.GAP for row in rows)  # the chart's unchanged lines above the marks
    assert window.size() == small  # the output gives way: the window does not grow past the screen
    assert detail.diff.lines.height() >= 3 * detail.diff.delegate.row_height()


def test_the_failed_picture_shows_the_crashed_agents_exit_code_once_and_its_standard_error(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    script = _screenshots()
    script._crash_a_task(services)

    script.SCENES["inbox-failed"](window)

    failed = window.inbox.failed

    def crashed() -> list[FailedCard]:
        return [card for card in failed.cards.values() if card.item.task.title == script.CRASHED_TASK]

    qtbot.waitUntil(lambda: bool(crashed()), timeout=10_000)
    (card,) = crashed()
    qtbot.waitUntil(card.isVisible, timeout=10_000)  # on the tab shown
    reason = card.reason.text()
    assert reason.startswith("stuck 3 times; last session: the agent exited with code 1;")
    assert reason.count("code 1") == 1 and "invalid x-api-key" in reason
