"""Desktop notifications reach a freedesktop notification server over a real session D-Bus."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from ralph_desk.app import build_window
from ralph_desk.domain.enums import Verb
from ralph_desk.domain.records import Signal
from ralph_desk.gui.desktop_bus import FreedesktopNotifications
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.models.signals import FlagItem
from ralph_desk.gui.notify import Notifier, Topic
from ralph_desk.services.container import Services
from tests.gui.conftest import controller, settle
from tests.gui.test_inbox import run_elsewhere
from tests.support.demo_rows import task_id
from tests.support.notification_server import NOTIFY_SIGNATURE, NotificationServer, Received

WAIT_MS = 5000
ASK = Signal(id=900, task_id=7, session_id=None, verb=Verb.ASK, created=datetime(2026, 11, 1), question="")


@pytest.fixture
def bus() -> Iterator[NotificationServer]:
    """A session bus of the test's own, with a notification server that records what it gets."""
    with NotificationServer() as server:
        yield server


@pytest.fixture
def desktop(bus: NotificationServer) -> Iterator[FreedesktopNotifications]:
    """The window's sender, on the test's bus (closed before the bus stops)."""
    sender = FreedesktopNotifications(bus.address, "ralph-desk", "ralph-desk")
    yield sender
    sender.close()


@pytest.fixture
def desktop_window(
    qtbot: QtBot,
    services: Services,
    settings: QSettings,
    bus: NotificationServer,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[MainWindow]:
    """The window as the app builds it, on a desktop whose session bus is the test's."""
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", bus.address)
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
    bus: NotificationServer, desktop: FreedesktopNotifications
) -> None:
    delivered = desktop.send_now("Task #7 needs your answer", "Metres or feet?")

    assert delivered
    assert bus.wait_for(1) == [
        Received("ralph-desk", "Task #7 needs your answer", "Metres or feet?", NOTIFY_SIGNATURE)
    ]


def test_without_a_notification_server_sending_says_it_failed(bus: NotificationServer) -> None:
    desktop = FreedesktopNotifications("unix:path=/nonexistent/bus", "ralph-desk")

    assert not desktop.send_now("Title", "Text")
    assert bus.received == []


def test_the_notifier_sends_a_new_blocking_question_and_not_one_seen_at_start(
    qtbot: QtBot, bus: NotificationServer, desktop: FreedesktopNotifications
) -> None:
    notifier = Notifier("Demo", use_tray=False, desktop=desktop)
    seen = dataclasses.replace(ASK, question="Seen at start?", blocking=True)
    new = dataclasses.replace(ASK, id=901, question="Tabs or spaces?", blocking=True)
    quiet = dataclasses.replace(ASK, id=902, question="Not blocking", blocking=False)

    notifier.update_asks([seen])
    with qtbot.waitSignal(notifier.sig_notified, timeout=WAIT_MS):
        notifier.update_asks([seen, new, quiet])

    assert bus.wait_for(1) == [
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
    notifier.notify(Topic.QUESTIONS, "Task #7 needs your answer", "Metres or feet?")
    qtbot.waitUntil(lambda: len(bus.received) == 1, timeout=WAIT_MS)

    with qtbot.waitSignal(notifier.sig_show_requested, timeout=WAIT_MS):
        bus.click(1)

    assert desktop_window.current_pane == "inbox"
