"""The composition root: steps start in order and stop in reverse; folders are checked before opening."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import QSettings
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from ralph_desk import app as desk_app
from ralph_desk.app import Startup, prepare_application, ready_project
from ralph_desk.gui import theme
from ralph_desk.gui.dialogs import initialise
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.settings import DeskSettings
from ralph_desk.gui.worker import Worker
from ralph_desk.project import ProjectPaths
from ralph_desk.services.container import Services
from ralph_desk.store.errors import REPAIR

WINDOW_WAIT_S = 120


async def shown_window(app: QApplication, running: asyncio.Future[int]) -> MainWindow:
    """The project window once `_run` shows it; fails naming the wait (or `_run`'s own end) otherwise."""
    deadline = time.monotonic() + WINDOW_WAIT_S
    while True:
        shown = (w for w in app.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible())
        window = next(shown, None)
        if window is not None:
            return window
        if running.done():
            pytest.fail(f"the app ended before showing its window: {running.result()!r}")
        if time.monotonic() > deadline:
            pytest.fail(f"no window shown after {WINDOW_WAIT_S} s")
        await asyncio.sleep(0.01)  # a poll interval, not a guess at how long anything takes


def recorder(log: list[str], name: str, fail: bool = False) -> desk_app.Action:
    async def act() -> None:
        log.append(name)
        if fail:
            raise OSError(f"{name} broke")

    return act


def test_steps_start_in_order_and_stop_in_reverse() -> None:
    log: list[str] = []
    startup = Startup()
    startup.add("services", recorder(log, "open"), recorder(log, "close"))
    startup.add("server", recorder(log, "serve"), recorder(log, "unserve"), required=False)
    startup.add("window", recorder(log, "show"), recorder(log, "hide"))

    failures = asyncio.run(startup.run())
    asyncio.run(startup.shutdown())

    assert failures == []
    assert log == ["open", "serve", "show", "hide", "unserve", "close"]


def test_an_optional_step_that_fails_is_reported_and_not_stopped() -> None:
    log: list[str] = []
    startup = Startup()
    startup.add("services", recorder(log, "open"), recorder(log, "close"))
    startup.add("the server", recorder(log, "serve", fail=True), recorder(log, "unserve"), required=False)

    failures = asyncio.run(startup.run())
    asyncio.run(startup.shutdown())

    assert failures == ["Could not start the server: serve broke"]
    assert log == ["open", "serve", "close"]


def test_a_required_step_that_fails_stops_the_start() -> None:
    log: list[str] = []
    startup = Startup()
    startup.add("services", recorder(log, "open", fail=True), recorder(log, "close"))
    startup.add("window", recorder(log, "show"))

    with pytest.raises(OSError, match="open broke"):
        asyncio.run(startup.run())
    assert log == ["open"]


def test_the_gui_thread_waits_at_most_a_millisecond_for_the_gil(qapp: QApplication) -> None:
    prepare_application()

    assert sys.getswitchinterval() == pytest.approx(desk_app.GIL_SWITCH_S)
    assert desk_app.GIL_SWITCH_S <= 0.001


def test_a_plain_folder_is_initialised_when_the_person_agrees(
    qapp: QApplication, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(initialise, "ask_to_initialise", lambda *_args: True)

    paths = ready_project(tmp_path / "fresh")

    assert paths is not None and paths.ralph.is_dir()


def test_a_plain_folder_stays_untouched_when_the_person_declines(
    qapp: QApplication, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(initialise, "ask_to_initialise", lambda *_args: False)

    assert ready_project(tmp_path / "fresh") is None
    assert not (tmp_path / "fresh" / ".ralph").exists()


def test_a_broken_project_is_refused_with_the_validation_message(
    qapp: QApplication, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown: list[tuple[str, str]] = []
    monkeypatch.setattr(desk_app, "_critical", lambda title, text: shown.append((title, text)))
    ProjectPaths.at(project).config_file.write_text("{ not json", encoding="utf-8")

    assert ready_project(project) is None

    ((title, text),) = shown
    assert "is not sound" in title
    assert "config.json" in text and "not valid JSON" in text


@pytest.mark.sqlite_only  # the damage is to the SQLite file
def test_a_damaged_database_gets_one_repair_advice_never_keeps_the_data(
    qapp: QApplication, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown: list[tuple[str, str]] = []
    monkeypatch.setattr(desk_app, "_critical", lambda title, text: shown.append((title, text)))
    paths = ProjectPaths.at(project)
    for leftover in (paths.db_file.with_name("ralph.db-wal"), paths.db_file.with_name("ralph.db-shm")):
        leftover.unlink(missing_ok=True)
    with paths.db_file.open("r+b") as database:
        database.write(b"not a database at all " * 8)

    assert ready_project(project) is None

    ((title, text),) = shown
    assert "is not sound" in title and "file is not a database" in text
    # `init --force` keeps the database, so "keeps the data" beside "move it aside" would contradict it.
    assert text.count(REPAIR) == 1 and "keeps the data" not in text


def _accepts(port: int) -> bool:
    """Whether something listens on this loopback port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(1)
        return probe.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def isolated_settings(tmp_path: Path) -> Iterator[None]:
    """Default QSettings in the test's folder, never the user's."""
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "config"))
    yield
    QSettings.setDefaultFormat(QSettings.Format.NativeFormat)


def test_the_app_runs_the_mcp_server_with_the_window_and_stops_both_when_it_closes(
    qapp: QApplication, project: Path, isolated_settings: None
) -> None:
    app = prepare_application()
    loop = qasync.QEventLoop(app)
    seen: dict[str, object] = {}

    async def scenario() -> int:
        running = asyncio.ensure_future(desk_app._run(app, ProjectPaths.at(project)))
        window = await shown_window(app, running)
        seen["mcp"] = window.mcp_label.text()
        port = int(str(seen["mcp"]).rsplit(":", 1)[1].split("/")[0])
        seen["listening"] = _accepts(port)
        seen["port"] = port
        window.close()
        return await asyncio.wait_for(running, timeout=20)

    try:
        code = loop.run_until_complete(scenario())
    finally:
        loop.close()
        asyncio.set_event_loop(None)

    assert code == 0
    assert str(seen["mcp"]).startswith("MCP http://127.0.0.1:")
    assert seen["listening"] is True
    assert _accepts(int(str(seen["port"]))) is False
    assert not any(isinstance(w, MainWindow) for w in app.topLevelWidgets())
    recent = json.dumps(QSettings().value("projects/recent"))
    assert str(project.resolve()) in recent


def test_a_decision_held_for_undo_when_the_window_quits_is_recorded(
    qapp: QApplication, project: Path, isolated_settings: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = prepare_application()
    loop = qasync.QEventLoop(app)
    shutting_down = threading.Event()
    original_shutdown = Worker.shutdown

    def shutdown(worker: Worker, wait: bool = True) -> None:
        shutting_down.set()
        original_shutdown(worker, wait)

    monkeypatch.setattr(Worker, "shutdown", shutdown)
    services = Services.open(ProjectPaths.at(project))
    ask = services.inbox.asks()[0]
    services.close()

    async def scenario() -> int:
        running = asyncio.ensure_future(desk_app._run(app, ProjectPaths.at(project)))
        window = await shown_window(app, running)
        assert window.controller is not None
        # The worker is busy until the app shuts it down: the answer waits behind that operation.
        window.controller.worker.submit("a long read", lambda: shutting_down.wait(20))
        window.controller.inbox.answer(ask.id, "Metres, one decimal.")
        assert window.controller.pending.held is not None
        window.close()
        return await asyncio.wait_for(running, timeout=30)

    try:
        code = loop.run_until_complete(scenario())
    finally:
        loop.close()
        asyncio.set_event_loop(None)

    assert code == 0
    reopened = Services.open(ProjectPaths.at(project))
    try:
        assert reopened.signals.get(ask.id).answer == "Metres, one decimal."
    finally:
        reopened.close()


def test_a_window_opened_in_the_dark_scheme_draws_its_sidebar_dark(
    qapp: QApplication, project: Path, isolated_settings: None
) -> None:
    app = prepare_application()
    DeskSettings(QSettings()).set_scheme("dark")
    loop = qasync.QEventLoop(app)
    seen: dict[str, str] = {}

    async def scenario() -> int:
        running = asyncio.ensure_future(desk_app._run(app, ProjectPaths.at(project)))
        window = await shown_window(app, running)
        seen["sidebar"] = window.sidebar.palette().color(QPalette.ColorRole.Base).name()
        window.close()
        return await asyncio.wait_for(running, timeout=30)

    try:
        assert loop.run_until_complete(scenario()) == 0
    finally:
        loop.close()
        asyncio.set_event_loop(None)
        theme.choose(None)

    assert seen["sidebar"] == theme.tones(theme.Scheme.DARK).sidebar
