"""The platform's own desktop notifications through desktop-notifier: freedesktop over D-Bus, macOS, Windows.

They work without a system tray (GNOME has none). They are sent on the window's asyncio loop (qasync),
so sending never blocks the GUI thread and a click comes back on it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Callable

from desktop_notifier import DesktopNotifier, Icon

from ralph_desk.gui.notifier_compat import backend_name, dbus_connection

log = logging.getLogger("ralph_desk.gui")

TIMEOUT_S = 5.0

Sent = Callable[[bool], None]


def available() -> bool:
    """Whether this desktop has a notification service desktop-notifier can reach.

    On Linux and the BSDs that is the session D-Bus; on macOS only a signed app bundle may notify.
    """
    if sys.platform not in ("win32", "darwin") and not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        return False
    return backend_name() != "DummyNotificationCenter"


class DesktopNotifications:
    """Shows notifications through the platform's notification service; a click calls `on_click`."""

    def __init__(self, app_name: str, icon_name: str = "") -> None:
        self.app_name = app_name
        self.icon = Icon(name=icon_name) if icon_name else None
        self.notifier = DesktopNotifier(app_name=app_name, app_icon=self.icon)
        self.on_click: Callable[[], None] | None = None
        self._sending: set[asyncio.Task[None]] = set()

    @property
    def sending(self) -> bool:
        """Whether a notification is under way (sent and not yet answered by the service)."""
        return bool(self._sending)

    def send(self, title: str, text: str, done: Sent | None = None) -> bool:
        """Start showing a notification; False when no asyncio loop runs here (nothing was started).

        `done(delivered)` is called on this thread once the service took it or refused it.
        """
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            log.info("no asyncio loop runs the window: the notification goes to the tray")
            return False
        task = loop.create_task(self._send(title, text, done))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)
        return True

    async def send_now(self, title: str, text: str) -> bool:
        """Show a notification; whether the platform's service took it (within `TIMEOUT_S`)."""
        taken: list[bool] = []
        try:
            # desktop-notifier logs a failure instead of raising it; only a dispatched one calls back.
            await asyncio.wait_for(
                self.notifier.send(
                    title, text, on_dispatched=lambda: taken.append(True), on_clicked=self._clicked
                ),
                TIMEOUT_S,
            )
        except TimeoutError:
            log.warning("the notification service did not answer within %g s", TIMEOUT_S)
            taken = []
        if not taken:
            # The next notification starts afresh; a connection left open by this one would be lost.
            self._disconnect()
            self.notifier = DesktopNotifier(app_name=self.app_name, app_icon=self.icon)
        return bool(taken)

    def close(self) -> None:
        """Drop the notifications under way and close the connection to the service (the window closes)."""
        for task in list(self._sending):
            task.cancel()
        self._disconnect()

    def _disconnect(self) -> None:
        # desktop-notifier has no close: its D-Bus backend keeps the connection.
        bus = dbus_connection(self.notifier)
        if bus is not None and getattr(bus, "connected", False):
            bus.disconnect()

    def _clicked(self) -> None:
        if self.on_click is not None:
            self.on_click()

    async def _send(self, title: str, text: str, done: Sent | None) -> None:
        try:
            delivered = await self.send_now(title, text)
        except Exception:  # the top of a task: a notification lost is logged, never a crash
            log.warning("desktop notification failed", exc_info=True)
            delivered = False
        if done is not None:
            done(delivered)
