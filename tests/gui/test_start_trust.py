"""The window's Start: a program that came with the project folder is shown with a warning."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from ralph_desk.gui.dialogs.start_loop import StartLoopDialog
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.panes.loop.state import Phase
from ralph_desk.gui.panes.loop.wiring import start_confirmed_key
from ralph_desk.loop.model import LoopSettings
from ralph_desk.loop.start_summary import summarise_start
from ralph_desk.loop.trust_check import untrusted_servers
from ralph_desk.project import read_config, trust
from ralph_desk.project.config import command_fingerprint
from ralph_desk.services.container import Services
from tests.gui.conftest import settle
from tests.gui.test_loop_pane import embedded, finish, loop_window, qt_loop, wiring
from tests.gui.test_rehearsal_loop import start_dialog
from tests.loop.test_trust import cloned_command, cloned_server

__all__ = ["embedded", "loop_window", "qt_loop"]

SESSION_MS = 120_000


@pytest.mark.slow
def test_start_warns_about_a_cloned_command_and_runs_it_only_once_confirmed(
    qtbot: QtBot,
    loop_window: MainWindow,
    qt_loop: object,
    services: Services,
    settings: QSettings,
    tmp_path: Path,
) -> None:
    assert settings.value(start_confirmed_key(str(services.paths.root)), False, bool)  # "don't ask again"
    assert services.tasks.next_runnable(limit=1)
    marker = tmp_path / "marker"
    command = cloned_command(services.paths, marker)
    cloned_server(services.paths, tmp_path / "server", "frontend")
    pane = loop_window.loop
    runs_before = services.sessions.list_loop_runs(limit=100)

    pane.start.click()  # remembered, yet asked: the folder named a program never allowed here
    settle(qtbot, loop_window)

    dialog = start_dialog(loop_window)
    assert dialog.warning is not None
    warning = dialog.warning.text()
    assert "came with the project folder" in warning and shlex.join(command) in warning
    # The database came with the folder too: its stdio server is named with the command.
    servers = trust.server_commands(services.disciplines.list())
    assert servers and "(.ralph/db/ralph.db, mcp_servers)" in warning
    assert all(trust.shown_command(entry) in warning for entry in servers)
    dialog.reject()
    assert not marker.exists() and not wiring(loop_window).running
    assert services.sessions.list_loop_runs(limit=100) == runs_before
    fingerprint = command_fingerprint(read_config(services.paths))
    assert fingerprint is not None and not trust.is_trusted(services.paths.root, fingerprint)

    pane.start.click()
    settle(qtbot, loop_window)
    start_dialog(loop_window).accept()
    settle(qtbot, loop_window)

    assert trust.is_trusted(services.paths.root, fingerprint)
    qtbot.waitUntil(marker.exists, timeout=SESSION_MS)
    finish(qtbot, qt_loop, wiring(loop_window).shutdown(), timeout=SESSION_MS)  # type: ignore[arg-type]
    qtbot.waitUntil(lambda: pane.phase is not Phase.RUNNING and pane.start.isEnabled(), timeout=SESSION_MS)

    changed = tmp_path / "changed"
    cloned_command(services.paths, changed)  # as a `git pull` would change it
    wiring(loop_window).start_dialog = None
    pane.start.click()
    settle(qtbot, loop_window)

    dialog = start_dialog(loop_window)
    assert dialog.warning is not None and str(changed) in dialog.warning.text()
    dialog.reject()
    assert not changed.exists()


@pytest.mark.sqlite_only  # a clone brings the SQLite file; the test writes it as one would
def test_start_names_a_loader_variable_a_server_is_given_and_never_its_value(
    qtbot: QtBot, services: Services, tmp_path: Path
) -> None:
    cloned_server(services.paths, tmp_path / "server", "frontend", env={"LD_PRELOAD": "/opt/hook/x.so"})
    found = untrusted_servers(services.paths, services.disciplines.list())
    assert found is not None

    dialog = StartLoopDialog(
        summarise_start(services, LoopSettings(agent="rehearsal"), services.paths.root),
        lambda _: None,
        None,
        found,
    )
    qtbot.addWidget(dialog)

    assert dialog.warning is not None and dialog.start_button.text() == "Trust and start"
    assert "(env: LD_PRELOAD; LD_PRELOAD can make it run other code)" in dialog.warning.text()
    assert "/opt/hook" not in dialog.warning.text()
