"""One way from the window to the services: through the worker, never on the GUI thread."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from ralph_desk.gui.directory import names_of
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.worker import Worker
from ralph_desk.services.container import Services
from tests.gui.conftest import controller, settle
from tests.gui.guard import GuiThreadGuard

WAIT_MS = 5000


def test_window_code_calling_a_service_on_the_gui_thread_is_caught(services: Services) -> None:
    guard = GuiThreadGuard(services)

    with pytest.raises(AssertionError, match=r"called on the GUI thread from ralph_desk\.gui\.directory"):
        names_of(services)

    assert len(guard.faults) == 1
    guard.faults.clear()


def test_the_same_call_handed_to_the_worker_passes(qtbot: QtBot, services: Services) -> None:
    guard = GuiThreadGuard(services)
    worker = Worker()
    found: list[tuple[list[str], list[str]]] = []
    try:
        worker.submit("read the names", lambda: names_of(services), found.append)
        qtbot.waitUntil(lambda: bool(found), timeout=WAIT_MS)
    finally:
        worker.shutdown()

    assert guard.faults == [] and "backend" in found[0][1]


def test_the_tests_and_the_services_themselves_may_call_on_the_gui_thread(services: Services) -> None:
    guard = GuiThreadGuard(services)

    services.tasks.list()
    services.reviews.list()  # a service calling others

    assert guard.faults == []


def test_every_pane_refreshes_without_a_service_call_on_the_gui_thread(
    qtbot: QtBot, window: MainWindow, gui_thread_guard: GuiThreadGuard
) -> None:
    for key in ("inbox", "tasks", "features", "disciplines", "loop", "dashboard"):
        window.show_pane(key)
        window.sig_refresh_requested.emit()
        settle(qtbot, window)

    assert gui_thread_guard.faults == []
    assert controller(window).worker.failures == []


def test_only_the_worker_starts_threads_in_the_window() -> None:
    from pathlib import Path

    import ralph_desk.gui as gui

    starters = ("ThreadPoolExecutor", "threading.Thread", "QThread")
    found = [
        f"{path.relative_to(Path(gui.__file__).parent)}: {starter}"
        for path in Path(gui.__file__).parent.rglob("*.py")
        if path.name != "worker.py"
        for starter in starters
        if starter in path.read_text(encoding="utf-8")
    ]
    assert found == []
