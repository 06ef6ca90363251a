"""Desktop notifications: a tray message when a new blocking question arrives."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from ralph_desk.domain.records import Signal as SignalRecord
from ralph_desk.gui import fmt, icons

log = logging.getLogger("ralph_desk.gui")

MESSAGE_MS = 8000


class Notifier(QObject):
    """Remembers which blocking questions were seen; tells the desktop about new ones."""

    sig_show_requested = Signal()
    """The person clicked the notification or the tray icon: show the inbox."""
    sig_quit_requested = Signal()
    """The person chose Quit in the tray menu."""

    def __init__(self, title: str, use_tray: bool = True, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.title = title
        self.sent: list[tuple[str, str]] = []
        self._seen: set[int] | None = None
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
        if self._seen is None:
            self._seen = set(blocking)
            return
        new = [ask for ask_id, ask in blocking.items() if ask_id not in self._seen]
        self._seen |= set(blocking)
        if len(new) == 1:
            ask = new[0]
            self.notify(f"Task #{ask.task_id} needs your answer", fmt.one_line(ask.question, 200))
        elif new:
            self.notify(f"{len(new)} new questions need your answer", fmt.one_line(new[0].question, 200))

    def set_waiting(self, count: int) -> None:
        """Show how many items wait in the tray tooltip."""
        if self.tray is not None:
            waiting = f" — {count} waiting in the inbox" if count else ""
            self.tray.setToolTip(f"{self.title}{waiting}")

    def notify(self, title: str, text: str) -> None:
        """Show a desktop notification (recorded even where there is no tray)."""
        self.sent.append((title, text))
        log.info("notification: %s — %s", title, text)
        if self.tray is not None and self.tray.supportsMessages():
            self.tray.showMessage(title, text, icons.app_icon(), MESSAGE_MS)

    def hide(self) -> None:
        """Remove the tray icon (on quit)."""
        if self.tray is not None:
            self.tray.hide()

    def _on_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason == QSystemTrayIcon.ActivationReason.Trigger:
            self.sig_show_requested.emit()
