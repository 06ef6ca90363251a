"""Freedesktop desktop notifications over the session D-Bus (works without a system tray, e.g. GNOME)."""

from __future__ import annotations

import logging
import os
import queue
import sys
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger("ralph_desk.gui")

SERVICE = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"
INTERFACE = "org.freedesktop.Notifications"
TIMEOUT_S = 5.0
EXPIRE_MS = -1  # the server's default
DEFAULT_ACTION = "default"  # the action of a click on the notification itself

Sent = Callable[[bool], None]


def session_bus_address() -> str | None:
    """The session bus of this desktop, if there is one (Linux and the BSDs only)."""
    if sys.platform in ("win32", "darwin"):
        return None
    return os.environ.get("DBUS_SESSION_BUS_ADDRESS") or None


class FreedesktopNotifications:
    """Sends `Notify` calls to the notification server on a D-Bus bus, each on a thread of its own.

    A click on one of its notifications calls `on_click` (from a thread of its own).
    """

    def __init__(self, address: str, app_name: str, icon: str = "") -> None:
        self.address = address
        self.app_name = app_name
        self.icon = icon
        self.on_click: Callable[[], None] | None = None
        self._lock = threading.Lock()
        self._sent: set[int] = set()
        self._router: Any = None
        self._clicks: queue.Queue[Any] | None = None
        self._sending: set[threading.Thread] = set()

    def send(self, title: str, text: str, done: Sent | None = None) -> None:
        """Show a notification; `done(delivered)` is called from the sending thread."""
        thread = threading.Thread(
            target=self._send, args=(title, text, done), name="desktop-notification", daemon=True
        )
        with self._lock:
            self._sending.add(thread)
        thread.start()

    def send_now(self, title: str, text: str) -> bool:
        """Show a notification and wait for the server's reply; whether it took it."""
        try:
            from jeepney import DBusAddress, new_method_call
        except ImportError:
            log.info("no D-Bus library (jeepney): desktop notifications go to the tray")
            return False
        target = DBusAddress(PATH, bus_name=SERVICE, interface=INTERFACE)
        actions = [DEFAULT_ACTION, "Show the inbox"]
        body: tuple[object, ...] = (self.app_name, 0, self.icon, title, text, actions, {}, EXPIRE_MS)
        message = new_method_call(target, "Notify", "susssasa{sv}i", body)
        try:
            with self._lock:
                router = self._router or self._open()
            reply = router.send_and_get_reply(message, timeout=TIMEOUT_S)
        except (OSError, TimeoutError, ValueError, RuntimeError) as error:
            log.warning("desktop notification not sent over D-Bus: %s", error)
            return False
        if reply.header.message_type.name == "error":
            log.warning("the notification server refused the notification: %s", reply.body)
            return False
        with self._lock:
            self._sent.add(int(reply.body[0]))
        return True

    def close(self) -> None:
        """Let the notifications under way finish, stop listening for clicks, close the bus connection."""
        with self._lock:
            sending = list(self._sending)
        for thread in sending:
            # Closing the router under a call in flight races inside jeepney (a reply dropped twice).
            thread.join(TIMEOUT_S)
        with self._lock:
            router, clicks, self._router, self._clicks = self._router, self._clicks, None, None
        if clicks is not None:
            clicks.put(None)
        if router is not None:
            router.close()
            router.conn.close()

    def _open(self) -> Any:
        """A connection that sends and also hears `ActionInvoked` (a click), kept open."""
        from jeepney import MatchRule
        from jeepney.bus_messages import message_bus
        from jeepney.io.threading import DBusRouter, open_dbus_connection

        router = DBusRouter(open_dbus_connection(bus=self.address))
        rule = MatchRule(type="signal", interface=INTERFACE, member="ActionInvoked", path=PATH)
        router.send_and_get_reply(message_bus.AddMatch(rule), timeout=TIMEOUT_S)
        clicks: queue.Queue[Any] = queue.Queue()
        router.filter(rule, queue=clicks)
        threading.Thread(target=self._hear, args=(clicks,), name="notification-clicks", daemon=True).start()
        self._router, self._clicks = router, clicks
        return router

    def _hear(self, clicks: queue.Queue[Any]) -> None:
        while (message := clicks.get()) is not None:
            notification, action = message.body
            with self._lock:
                ours = notification in self._sent
            if ours and action == DEFAULT_ACTION and self.on_click is not None:
                self.on_click()

    def _send(self, title: str, text: str, done: Sent | None) -> None:
        try:
            delivered = self.send_now(title, text)
        except Exception:  # the top of a thread: a notification lost is logged, never a crash
            log.warning("desktop notification failed", exc_info=True)
            delivered = False
        finally:
            with self._lock:
                self._sending.discard(threading.current_thread())
        if done is not None:
            done(delivered)
