"""The window's Start in a git project whose base branch is not there: refused, saying why; nothing runs."""

from __future__ import annotations

import sys

from pytestqt.qtbot import QtBot

from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.panes.loop.state import Phase
from ralph_desk.project import update_config
from ralph_desk.services.container import Services
from tests.gui.conftest import settle
from tests.gui.test_loop_pane import embedded, loop_window, qt_loop, wiring
from tests.support.git_repo import commit_all, git

__all__ = ["embedded", "loop_window", "qt_loop"]


def test_start_refuses_a_misspelt_base_branch_with_the_reason_and_runs_nothing(
    qtbot: QtBot, loop_window: MainWindow, services: Services
) -> None:
    root = services.paths.root
    git(root, "init", "-q", "-b", "main")
    commit_all(root, "start")
    update_config(services.paths, base_branch="mian")
    assert services.tasks.next_runnable(limit=1)
    pane = loop_window.loop
    pane.settings.agent_bin.setText(sys.executable)
    runs_before = services.sessions.list_loop_runs(limit=100)

    pane.start.click()  # Start was confirmed before ("don't ask again"): this would run at once
    settle(qtbot, loop_window)

    assert loop_window.message_bar.level == "error"
    message = loop_window.message_bar.text
    assert message.startswith(
        "Could not start the loop: base_branch 'mian' in .ralph/config.json is not a branch"
    )
    assert "name an existing branch in base_branch (branches: main)" in message
    assert not wiring(loop_window).running and pane.phase is Phase.IDLE and pane.start.isEnabled()
    assert services.sessions.list_loop_runs(limit=100) == runs_before
