"""Desktop notifications for what needs the person: blocking questions and flags, failures, a stopped loop."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from enum import StrEnum
from functools import partial

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from ralph_desk.domain.records import Signal as SignalRecord
from ralph_desk.gui import fmt, icons
from ralph_desk.gui.desktop_notifications import DesktopNotifications

log = logging.getLogger("ralph_desk.gui")

MESSAGE_MS = 8000
TEXT_CHARS = 200


class Topic(StrEnum):
    """What a notification is about; each can be turned off."""

    QUESTIONS = "questions"
    FLAGS = "flags"
    FAILED = "failed"
    LOOP = "loop"


TOPIC_TITLES: dict[Topic, str] = {
    Topic.QUESTIONS: "Blocking questions",
    Topic.FLAGS: "Blocking flags",
    Topic.FAILED: "Failed tasks",
    Topic.LOOP: "The loop stopping on a limit or an error",
}

Enabled = Callable[[Topic], bool]


class _NewItems:
    """Remembers which ids were seen; the first look only learns them."""

    def __init__(self) -> None:
        self.seen: set[int] | None = None

    def new(self, ids: Iterable[int]) -> list[int]:
        """The ids not seen before (none on the first call)."""
        current = list(ids)
        if self.seen is None:
            self.seen = set(current)
            return []
        fresh = [item for item in current if item not in self.seen]
        self.seen |= set(current)
        return fresh


class Notifier(QObject):
    """Tells the desktop about new items that need the person: its own notifications, else the tray."""

    sig_show_requested = Signal()
    """The person clicked the notification or the tray icon: show the inbox."""
    sig_quit_requested = Signal()
    """The person chose Quit in the tray menu."""
    sig_notified = Signal(str, str)
    """A notification went out (title, text): the window asks for attention."""
    _sig_clicked = Signal()
    """A desktop notification was clicked (on macOS from the system's thread; delivered on this one's)."""

    def __init__(
        self,
        title: str,
        use_tray: bool = True,
        parent: QObject | None = None,
        desktop: DesktopNotifications | None = None,
        enabled: Enabled | None = None,
    ) -> None:
        super().__init__(parent)
        self.title = title
        self.waiting = 0
        self.sent: list[tuple[str, str]] = []
        self.desktop = desktop
        self._sig_clicked.connect(self.sig_show_requested)
        if desktop is not None:
            desktop.on_click = self._sig_clicked.emit
        self.enabled = enabled or (lambda _topic: True)
        self._asks = _NewItems()
        self._flags = _NewItems()
        self._failed = _NewItems()
        self.tray: QSystemTrayIcon | None = None
        if use_tray and QSystemTrayIcon.isSystemTrayAvailable():
            self.tray = self._make_tray()

    def _make_tray(self) -> QSystemTrayIcon:
        tray = QSystemTrayIcon(icons.app_icon(), self)
        tray.setToolTip(self.title)
        menu = QMenu()
        menu.addAction("Show the inbox", self.sig_show_requested.emit)
        menu.addSeparator()
        menu.addAction("Quit", self.sig_quit_requested.emit)
        self._menu = menu
        tray.setContextMenu(menu)
        tray.activated.connect(self._on_activated)
        tray.messageClicked.connect(self.sig_show_requested)
        tray.show()
        return tray

    def update_asks(self, asks: Sequence[SignalRecord]) -> None:
        """Note the open questions; notify about blocking ones not seen before (none on the first call)."""
        blocking = {ask.id: ask for ask in asks if ask.blocking}
        new = [blocking[i] for i in self._asks.new(blocking)]
        if len(new) == 1:
            ask = new[0]
            self.notify(
                Topic.QUESTIONS,
                f"Task #{ask.task_id} needs your answer",
                fmt.one_line(ask.question, TEXT_CHARS),
            )
        elif new:
            self.notify(
                Topic.QUESTIONS,
                f"{len(new)} new questions need your answer",
                fmt.one_line(new[0].question, TEXT_CHARS),
            )

    def update_flags(self, flags: Sequence[SignalRecord]) -> None:
        """Note the open blocking flags; notify about those not seen before."""
        by_id = {flag.id: flag for flag in flags}
        new = [by_id[i] for i in self._flags.new(by_id)]
        if new:
            first = new[0]
            head = (
                f"Task #{first.task_id} raised a blocking flag"
                if len(new) == 1
                else f"{len(new)} new blocking flags"
            )
            self.notify(Topic.FLAGS, head, fmt.one_line(first.what, TEXT_CHARS))

    def update_failed(self, tasks: Sequence[tuple[int, str, str]]) -> None:
        """Note the failed tasks (id, title, why); notify about those that failed since the last look, why."""
        failed = {task_id: (title, why) for task_id, title, why in tasks}
        new = self._failed.new(failed)
        if len(new) == 1:
            title, why = failed[new[0]]
            self.notify(Topic.FAILED, f"Task #{new[0]} failed: {title}", fmt.one_line(why, TEXT_CHARS))
        elif new:
            title, why = failed[new[0]]
            listed = ", ".join(f"#{i}" for i in new)
            self.notify(
                Topic.FAILED,
                f"{len(new)} tasks failed ({listed})",
                fmt.one_line(f"#{new[0]}: {why}", TEXT_CHARS),
            )

    def loop_stopped(self, reason: str) -> None:
        """The loop stopped on a limit or an error."""
        self.notify(Topic.LOOP, "The loop stopped", fmt.one_line(reason, TEXT_CHARS))

    def set_title(self, title: str) -> None:
        """Name the project (read once the window is built) in the tray tooltip."""
        self.title = title
        self.set_waiting(self.waiting)

    def set_waiting(self, count: int) -> None:
        """Show how many items wait in the tray tooltip."""
        self.waiting = count
        if self.tray is not None:
            waiting = f" — {count} waiting in the inbox" if count else ""
            self.tray.setToolTip(f"{self.title}{waiting}")

    def notify(self, topic: Topic, title: str, text: str) -> None:
        """Show a desktop notification unless its topic is turned off (recorded even without a desktop)."""
        if not self.enabled(topic):
            log.info("notification turned off (%s): %s", topic.value, title)
            return
        self.sent.append((title, text))
        log.info("notification: %s — %s", title, text)
        self.sig_notified.emit(title, text)
        if self.desktop is None or not self.desktop.send(title, text, partial(self._sent, title, text)):
            self._tray_message(title, text)

    def _sent(self, title: str, text: str, delivered: bool) -> None:
        if not delivered:
            self._tray_message(title, text)

    def _tray_message(self, title: str, text: str) -> None:
        """The fallback where no notification service took it: the tray's balloon, if there is a tray."""
        if self.tray is not None and self.tray.supportsMessages():
            self.tray.showMessage(title, text, icons.app_icon(), MESSAGE_MS)

    def hide(self) -> None:
        """Remove the tray icon and close the connection to the notification service (on quit)."""
        if self.tray is not None:
            self.tray.hide()
        if self.desktop is not None:
            self.desktop.close()

    def _on_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason == QSystemTrayIcon.ActivationReason.Trigger:
            self.sig_show_requested.emit()
