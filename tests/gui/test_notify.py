"""Desktop notifications reach a freedesktop notification server over a real session D-Bus."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from ralph_desk.app import build_window
from ralph_desk.domain.enums import Verb
from ralph_desk.domain.records import Signal
from ralph_desk.gui import desktop_notifications
from ralph_desk.gui.desktop_notifications import DesktopNotifications
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.models.signals import FlagItem
from ralph_desk.gui.notify import Notifier, Topic
from ralph_desk.services.container import Services
from tests.gui.conftest import controller, settle
from tests.gui.test_inbox import run_elsewhere
from tests.gui.test_loop_pane import finish, qt_loop
from tests.support.demo_rows import task_id
from tests.support.notification_server import NOTIFY_SIGNATURE, NotificationServer, Received

__all__ = ["qt_loop"]

WAIT_MS = 5000
ASK = Signal(id=900, task_id=7, session_id=None, verb=Verb.ASK, created=datetime(2026, 11, 1), question="")


@pytest.fixture
def bus(monkeypatch: pytest.MonkeyPatch) -> Iterator[NotificationServer]:
    """The desktop's session bus, the test's own, with a notification server that records what it gets."""
    with NotificationServer() as server:
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", server.address)
        yield server


@pytest.fixture
def desktop(bus: NotificationServer, qt_loop: qasync.QEventLoop) -> Iterator[DesktopNotifications]:
    """The window's sender, on the test's bus and the window's asyncio loop (closed before the bus stops)."""
    sender = DesktopNotifications("ralph-desk", "ralph-desk")
    yield sender
    sender.close()


@pytest.fixture
def desktop_window(
    qtbot: QtBot,
    services: Services,
    settings: QSettings,
    bus: NotificationServer,
    qt_loop: qasync.QEventLoop,
) -> Iterator[MainWindow]:
    """The window as the app builds it, on a desktop whose session bus is the test's."""
    built = build_window(services, settings=settings, use_tray=True)
    qtbot.addWidget(built)
    built.show()
    qtbot.waitExposed(built)
    settle(qtbot, built)
    yield built
    controller(built).feed.stop()
    controller(built).notifier.hide()
    built.close()


def test_a_notification_goes_over_the_session_bus_with_the_freedesktop_signature(
    qtbot: QtBot, qt_loop: qasync.QEventLoop, bus: NotificationServer, desktop: DesktopNotifications
) -> None:
    delivered = finish(qtbot, qt_loop, desktop.send_now("Task #7 needs your answer", "Metres or feet?"))

    assert delivered
    assert bus.wait_for(1) == [
        Received("ralph-desk", "Task #7 needs your answer", "Metres or feet?", NOTIFY_SIGNATURE)
    ]


def test_without_a_notification_server_sending_says_it_failed(
    qtbot: QtBot, qt_loop: qasync.QEventLoop, bus: NotificationServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
    desktop = DesktopNotifications("ralph-desk")

    assert not finish(qtbot, qt_loop, desktop.send_now("Title", "Text"))
    assert bus.received == []
    desktop.close()


def test_a_desktop_bus_without_a_notification_server_keeps_no_connection_per_failed_notification(
    qtbot: QtBot, qt_loop: qasync.QEventLoop, monkeypatch: pytest.MonkeyPatch
) -> None:
    with NotificationServer(serving=False) as bare:
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", bare.address)
        desktop = DesktopNotifications("ralph-desk")

        first = finish(qtbot, qt_loop, desktop.send_now("Task #7 failed", "No verb."))
        second = finish(qtbot, qt_loop, desktop.send_now("Task #8 failed", "No verb."))

        assert not first and not second
        qtbot.waitUntil(lambda: bare.clients() == 0, timeout=WAIT_MS)
        desktop.close()


def test_sending_returns_at_once_and_reports_when_the_server_answered(
    qtbot: QtBot, qt_loop: qasync.QEventLoop, bus: NotificationServer, desktop: DesktopNotifications
) -> None:
    outcomes: list[bool] = []
    bus.answering.clear()

    assert desktop.send("Task #7 failed", "Three sessions ended without a verb.", outcomes.append)

    qtbot.waitUntil(lambda: len(bus.received) == 1, timeout=WAIT_MS)  # the window's loop runs meanwhile
    assert outcomes == []  # the server has it and withholds its reply
    bus.answering.set()
    qtbot.waitUntil(lambda: outcomes == [True], timeout=WAIT_MS)


def test_a_server_that_never_answers_counts_as_not_delivered(
    qtbot: QtBot,
    qt_loop: qasync.QEventLoop,
    bus: NotificationServer,
    desktop: DesktopNotifications,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(desktop_notifications, "TIMEOUT_S", 0.2)
    outcomes: list[bool] = []
    bus.answering.clear()

    desktop.send("The loop stopped", "The budget is spent.", outcomes.append)

    qtbot.waitUntil(lambda: outcomes == [False], timeout=WAIT_MS)


def test_without_an_asyncio_loop_the_notification_is_not_started(bus: NotificationServer) -> None:
    desktop = DesktopNotifications("ralph-desk")

    assert not desktop.send("Title", "Text")
    assert bus.received == []


def test_the_notifier_sends_a_new_blocking_question_and_not_one_seen_at_start(
    qtbot: QtBot, bus: NotificationServer, desktop: DesktopNotifications
) -> None:
    notifier = Notifier("Demo", use_tray=False, desktop=desktop)
    seen = dataclasses.replace(ASK, question="Seen at start?", blocking=True)
    new = dataclasses.replace(ASK, id=901, question="Tabs or spaces?", blocking=True)
    quiet = dataclasses.replace(ASK, id=902, question="Not blocking", blocking=False)

    notifier.update_asks([seen])
    with qtbot.waitSignal(notifier.sig_notified, timeout=WAIT_MS):
        notifier.update_asks([seen, new, quiet])

    qtbot.waitUntil(lambda: len(bus.received) == 1, timeout=WAIT_MS)
    assert bus.received == [
        Received("ralph-desk", "Task #7 needs your answer", "Tabs or spaces?", NOTIFY_SIGNATURE)
    ]
    assert notifier.sent == [("Task #7 needs your answer", "Tabs or spaces?")]


def test_a_blocking_flag_raised_elsewhere_is_notified_over_the_bus_and_a_setting_turns_flags_off(
    qtbot: QtBot, desktop_window: MainWindow, bus: NotificationServer, services: Services, project: Path
) -> None:
    chart = task_id(services, "Alert settings page")
    script = (
        "import sys; from ralph_desk.project import ProjectPaths; "
        "from ralph_desk.services.container import Services; "
        "s = Services.open(ProjectPaths.at(sys.argv[1])); "
        "s.signals.record(int(sys.argv[2]), None, 'flag', category='security', severity='blocking', "
        "what=sys.argv[3]); s.close()"
    )
    notifier = controller(desktop_window).notifier

    run_elsewhere("-c", script, str(project), str(chart), "The API key is committed.")

    qtbot.waitUntil(lambda: len(bus.received) == 1, timeout=WAIT_MS)  # the window's event loop runs
    assert bus.received[0] == Received(
        "ralph-desk", f"Task #{chart} raised a blocking flag", "The API key is committed.", NOTIFY_SIGNATURE
    )
    desktop_window.notification_actions[Topic.FLAGS].setChecked(False)
    run_elsewhere("-c", script, str(project), str(chart), "A second key is committed.")
    qtbot.waitUntil(
        lambda: any(item.flag.what == "A second key is committed." for item in flag_items(desktop_window)),
        timeout=WAIT_MS,
    )
    settle(qtbot, desktop_window)
    assert [title for title, _ in notifier.sent] == [f"Task #{chart} raised a blocking flag"]
    assert len(bus.received) == 1


def flag_items(window: MainWindow) -> list[FlagItem]:
    return list(window.inbox.flags.model.items)


def test_clicking_a_notification_shows_the_inbox(
    qtbot: QtBot, desktop_window: MainWindow, bus: NotificationServer
) -> None:
    notifier = controller(desktop_window).notifier
    desktop_window.show_pane("tasks")
    desktop = notifier.desktop
    assert desktop is not None
    notifier.notify(Topic.QUESTIONS, "Task #7 needs your answer", "Metres or feet?")
    qtbot.waitUntil(lambda: len(bus.received) == 1 and not desktop.sending, timeout=WAIT_MS)

    with qtbot.waitSignal(notifier.sig_show_requested, timeout=WAIT_MS):
        bus.click(1)

    assert desktop_window.current_pane == "inbox"
