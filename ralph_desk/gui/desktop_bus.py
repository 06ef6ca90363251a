"""Freedesktop desktop notifications over the session D-Bus (works without a system tray, e.g. GNOME)."""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Callable

log = logging.getLogger("ralph_desk.gui")

SERVICE = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"
INTERFACE = "org.freedesktop.Notifications"
TIMEOUT_S = 5.0
EXPIRE_MS = -1  # the server's default

Sent = Callable[[bool], None]


def session_bus_address() -> str | None:
    """The session bus of this desktop, if there is one (Linux and the BSDs only)."""
    if sys.platform in ("win32", "darwin"):
        return None
    return os.environ.get("DBUS_SESSION_BUS_ADDRESS") or None


class FreedesktopNotifications:
    """Sends `Notify` calls to the notification server on a D-Bus bus, each on a thread of its own."""

    def __init__(self, address: str, app_name: str, icon: str = "") -> None:
        self.address = address
        self.app_name = app_name
        self.icon = icon

    def send(self, title: str, text: str, done: Sent | None = None) -> None:
        """Show a notification; `done(delivered)` is called from the sending thread."""
        thread = threading.Thread(
            target=self._send, args=(title, text, done), name="desktop-notification", daemon=True
        )
        thread.start()

    def send_now(self, title: str, text: str) -> bool:
        """Show a notification and wait for the server's reply; whether it took it."""
        try:
            from jeepney import DBusAddress, new_method_call
            from jeepney.io.blocking import open_dbus_connection
        except ImportError:
            log.info("no D-Bus library (jeepney): desktop notifications go to the tray")
            return False
        target = DBusAddress(PATH, bus_name=SERVICE, interface=INTERFACE)
        message = new_method_call(
            target, "Notify", "susssasa{sv}i", (self.app_name, 0, self.icon, title, text, [], {}, EXPIRE_MS)
        )
        try:
            with open_dbus_connection(bus=self.address) as connection:
                reply = connection.send_and_get_reply(message, timeout=TIMEOUT_S)
        except (OSError, TimeoutError, ValueError) as error:
            log.warning("desktop notification not sent over D-Bus: %s", error)
            return False
        if reply.header.message_type.name == "error":
            log.warning("the notification server refused the notification: %s", reply.body)
            return False
        return True

    def _send(self, title: str, text: str, done: Sent | None) -> None:
        delivered = self.send_now(title, text)
        if done is not None:
            done(delivered)
