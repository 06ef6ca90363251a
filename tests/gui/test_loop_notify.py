"""The loop stopping by itself (a limit, an error) is notified; a stop by the person is not."""

from __future__ import annotations

import pytest
import qasync
from pytestqt.qtbot import QtBot

from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.panes.loop.state import Phase
from tests.gui.conftest import controller, settle
from tests.gui.test_loop_pane import embedded, loop_window, qt_loop
from tests.gui.test_rehearsal_loop import no_agent_programs

__all__ = ["embedded", "loop_window", "no_agent_programs", "qt_loop"]

LOOP_MS = 60_000


@pytest.mark.slow
def test_the_loop_stopping_on_its_iteration_limit_is_notified(
    qtbot: QtBot, no_agent_programs: None, qt_loop: qasync.QEventLoop, loop_window: MainWindow
) -> None:
    pane = loop_window.loop
    assert pane.settings.agent.currentData() == "rehearsal"
    pane.settings.max_iterations.setValue(1)

    pane.start.click()
    settle(qtbot, loop_window)

    qtbot.waitUntil(lambda: pane.phase is Phase.COMPLETED, timeout=LOOP_MS)
    sent = controller(loop_window).notifier.sent
    assert ("The loop stopped", "reached the maximum of 1 iterations") in sent
    assert pane.state.text() in ("completed", "all work done")
