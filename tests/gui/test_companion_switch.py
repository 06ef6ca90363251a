"""The companion page's loop switch in the window: it sees, pauses, resumes and stops the Loop pane's loop."""

from __future__ import annotations

import socket
import sys

import pytest
import qasync
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from ralph_desk.app import build_window
from ralph_desk.domain.enums import TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.gui.loop_switch import WindowLoopSwitch
from ralph_desk.gui.panes.loop.state import Phase
from ralph_desk.gui.panes.loop.wiring import start_confirmed_key
from ralph_desk.mcp_server.embedded import EmbeddedMcp
from ralph_desk.project import update_config
from ralph_desk.services.container import Services
from tests.gui.conftest import controller
from tests.gui.test_loop_pane import SESSION_MS, embedded, finish, qt_loop, wiring
from tests.support.ide import HELD_AGENT

__all__ = ["embedded", "qt_loop"]


@pytest.mark.slow
def test_the_switch_pauses_resumes_and_stops_the_windows_loop_without_asking(
    qtbot: QtBot, qt_loop: qasync.QEventLoop, services: Services, settings: QSettings, embedded: EmbeddedMcp
) -> None:
    for task in services.tasks.list(status=TaskStatus.IN_PROGRESS.value):
        services.tasks.move(task.id, TaskStatus.PENDING.value, Mover.IMPORT)  # as the loop recovers them
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    agents: list[socket.socket] = []
    update_config(
        services.paths,
        agent="command",
        agent_command=[sys.executable, str(HELD_AGENT), str(listener.getsockname()[1])],
    )
    settings.setValue(start_confirmed_key(str(services.paths.root)), True)
    window = build_window(services, settings=settings, use_tray=False, issuer=embedded)
    qtbot.addWidget(window)
    switch = WindowLoopSwitch(lambda: controller(window).loop)
    assert switch.view().running is False and switch.view().state == "not running"

    def agent_started() -> bool:
        try:
            agents.append(listener.accept()[0])
        except BlockingIOError:
            return False
        return True

    try:
        window.loop.start.click()
        qtbot.waitUntil(agent_started, timeout=SESSION_MS)
        qtbot.waitUntil(lambda: switch.view().current_task_id is not None, timeout=SESSION_MS)
        seen = switch.view()
        assert seen.running and not seen.paused and seen.state == "running"

        switch.pause()
        assert window.loop.phase is Phase.PAUSING and switch.view().paused
        switch.resume()
        assert window.loop.phase is Phase.RUNNING and not switch.view().paused
        switch.stop()  # an agent works: the window would ask, the page cannot answer; it stops now

        assert wiring(window).stop_box is None
        qtbot.waitUntil(lambda: not switch.view().running, timeout=SESSION_MS)
        assert window.loop.phase is Phase.STOPPED and switch.view().state == "stopped"
    finally:
        for line in (*agents, listener):
            line.close()
        finish(qtbot, qt_loop, wiring(window).shutdown(), timeout=60_000)
        controller(window).feed.stop()
    task_id = seen.current_task_id
    assert task_id is not None and services.tasks.get(task_id).status is TaskStatus.PENDING
