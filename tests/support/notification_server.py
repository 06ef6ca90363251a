"""A private session D-Bus (`dbus-daemon --session`) with a freedesktop notification server that records.

It answers what clients ask before `Notify` (introspection, server information, capabilities).
"""

from __future__ import annotations

import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from types import TracebackType

from jeepney import DBusAddress, HeaderFields, MessageType, new_error, new_method_return, new_signal
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import DBusConnection, open_dbus_connection

SERVICE = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"
INTERFACE = "org.freedesktop.Notifications"
NOTIFY_SIGNATURE = "susssasa{sv}i"
INTROSPECTABLE = "org.freedesktop.DBus.Introspectable"
# What a notification server such as GNOME Shell's says about itself (the parts clients read).
INTROSPECTION = f"""<!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
<node>
  <interface name="{INTERFACE}">
    <method name="Notify">
      <arg type="s" direction="in"/><arg type="u" direction="in"/><arg type="s" direction="in"/>
      <arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="as" direction="in"/>
      <arg type="a{{sv}}" direction="in"/><arg type="i" direction="in"/><arg type="u" direction="out"/>
    </method>
    <method name="CloseNotification"><arg type="u" direction="in"/></method>
    <method name="GetCapabilities"><arg type="as" direction="out"/></method>
    <method name="GetServerInformation">
      <arg type="s" direction="out"/><arg type="s" direction="out"/>
      <arg type="s" direction="out"/><arg type="s" direction="out"/>
    </method>
    <signal name="NotificationClosed"><arg type="u"/><arg type="u"/></signal>
    <signal name="ActionInvoked"><arg type="u"/><arg type="s"/></signal>
  </interface>
  <interface name="{INTROSPECTABLE}">
    <method name="Introspect"><arg type="s" direction="out"/></method>
  </interface>
</node>
"""
START_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Received:
    """One `Notify` call as the server got it."""

    app_name: str
    summary: str
    body: str
    signature: str


@dataclass
class NotificationServer:
    """Runs a session bus and a `Notify` server on it; `received` holds every notification, in order."""

    address: str = ""
    received: list[Received] = field(default_factory=list)
    _daemon: subprocess.Popen[str] | None = None
    _connection: DBusConnection | None = None
    _thread: threading.Thread | None = None
    _arrived: threading.Condition = field(default_factory=threading.Condition)
    answering: threading.Event = field(default_factory=threading.Event)
    """Cleared, the server records each `Notify` but withholds its reply until it is set again."""
    serving: bool = True
    """False: a session bus with no notification server on it (as on a desktop without one)."""

    def __enter__(self) -> NotificationServer:
        binary = shutil.which("dbus-daemon")
        if binary is None:
            raise RuntimeError("dbus-daemon is not installed (Debian package `dbus`); .ci/run installs it")
        self._daemon = subprocess.Popen(
            [binary, "--session", "--nofork", "--print-address=1"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self._daemon.stdout is not None
        self.address = self._daemon.stdout.readline().strip()
        if not self.address:
            raise RuntimeError("dbus-daemon printed no address")
        self._connection = open_dbus_connection(bus=self.address)
        if not self.serving:
            return self
        reply = self._connection.send_and_get_reply(message_bus.RequestName(SERVICE), timeout=START_TIMEOUT_S)
        if reply.body != (1,):  # DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER
            raise RuntimeError(f"could not own {SERVICE}: {reply.body}")
        self.answering.set()
        self._thread = threading.Thread(target=self._serve, name="notification-server", daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.answering.set()
        if self._daemon is not None:
            self._daemon.terminate()  # the server's socket closes, which ends its thread
            self._daemon.wait(timeout=START_TIMEOUT_S)
            if self._daemon.stdout is not None:
                self._daemon.stdout.close()
        if self._thread is not None:
            self._thread.join(timeout=START_TIMEOUT_S)
        if self._connection is not None:
            self._connection.close()

    def wait_for(self, count: int, timeout_s: float = 10.0) -> list[Received]:
        """The notifications once `count` have arrived (raises after `timeout_s`)."""
        with self._arrived:
            if not self._arrived.wait_for(lambda: len(self.received) >= count, timeout_s):
                raise TimeoutError(f"{len(self.received)} of {count} notifications arrived")
            return list(self.received)

    def clients(self) -> int:
        """How many connections other than the server's are open on the bus."""
        with open_dbus_connection(bus=self.address) as asking:
            reply = asking.send_and_get_reply(message_bus.ListNames(), timeout=START_TIMEOUT_S)
        unique = [name for name in reply.body[0] if name.startswith(":")]
        return len(unique) - 2  # the server's and the one that asked

    def click(self, number: int) -> None:
        """Click notification `number` (1 for the first received), as a person would."""
        assert self._connection is not None
        emitter = DBusAddress(PATH, interface=INTERFACE)
        self._connection.send(new_signal(emitter, "ActionInvoked", "us", (number, "default")))

    def _serve(self) -> None:
        connection = self._connection
        assert connection is not None
        while True:
            try:
                message = connection.receive()
            except (OSError, EOFError, ValueError):
                return
            header = message.header
            if header.message_type is not MessageType.method_call:
                continue
            member = header.fields.get(HeaderFields.member)
            signature = header.fields.get(HeaderFields.signature, "")
            interface = header.fields.get(HeaderFields.interface)
            if (interface, member) == (INTROSPECTABLE, "Introspect"):
                connection.send(new_method_return(message, "s", (INTROSPECTION,)))
                continue
            if (interface, member) == (INTERFACE, "GetServerInformation"):
                about = ("recorder", "ralph-desk tests", "1", "1.2")  # name, vendor, version, spec
                connection.send(new_method_return(message, "ssss", about))
                continue
            if (interface, member) == (INTERFACE, "GetCapabilities"):
                connection.send(new_method_return(message, "as", (["actions", "body"],)))
                continue
            if member != "Notify" or interface != INTERFACE:
                connection.send(new_error(message, "org.freedesktop.DBus.Error.UnknownMethod"))
                continue
            app_name, _replaces, _icon, summary, body = message.body[:5]
            with self._arrived:
                self.received.append(Received(app_name, summary, body, signature))
                number = len(self.received)
                self._arrived.notify_all()
            self.answering.wait(START_TIMEOUT_S)
            try:
                connection.send(new_method_return(message, "u", (number,)))
            except OSError:  # a reply withheld until the bus stopped: nobody is there to get it
                return
