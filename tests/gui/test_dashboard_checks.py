"""The Dashboard says how often `done` passed its checks the first time (DESIGN §13)."""

from __future__ import annotations

import sys

from pytestqt.qtbot import QtBot

from ralph_desk.domain.checks import Check, CheckPurpose
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.services.container import Services
from tests.gui.conftest import settle

WAIT_MS = 10_000
GREEN = Check(name="tests", run=f"{sys.executable} -c \"print('ok')\"", timeout_s=60)
RED = Check(name="tests", run=f'{sys.executable} -c "raise SystemExit(1)"', timeout_s=60)


def test_the_dashboard_counts_tasks_whose_first_checked_done_passed(
    qtbot: QtBot, window: MainWindow, services: Services
) -> None:
    window.show_pane("dashboard")
    settle(qtbot, window)
    pane = window.dashboard
    assert pane.first_checks.isHidden()
    assert pane.first_checks_note.text().startswith("no checks yet")
    first, second = (task.id for task in services.tasks.list()[:2])
    root = services.paths.root

    def gate(check: Check, task: int, session: str) -> None:
        services.checks.run([check], root, purpose=CheckPurpose.SESSION, task_id=task, session_id=session)

    gate(GREEN, first, "s-1")
    gate(RED, second, "s-2")  # came back to its agent
    gate(GREEN, second, "s-3")  # passed the second time: not on the first done

    qtbot.waitUntil(lambda: pane.first_checks.text() == "1 of 2", timeout=WAIT_MS)
    assert pane.first_checks.isVisible()
    assert pane.first_checks_note.text() == "tasks passed their checks on the first done (50%)"
