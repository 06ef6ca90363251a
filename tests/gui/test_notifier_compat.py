"""The private parts of desktop-notifier that `ralph_desk.gui.notifier_compat` reaches are still there."""

from __future__ import annotations

import inspect

from desktop_notifier import DesktopNotifier
from desktop_notifier.backends.base import DesktopNotifierBackend
from desktop_notifier.backends.dbus import DBusDesktopNotifier

from ralph_desk.gui import notifier_compat


def test_the_backend_class_is_named_by_the_library() -> None:
    assert notifier_compat.backend_name().endswith(("Notifier", "NotificationCenter"))


def test_a_notifier_keeps_its_backend() -> None:
    notifier = DesktopNotifier(app_name="ralph-desk test")
    assert isinstance(notifier_compat.backend(notifier), DesktopNotifierBackend)


def test_the_dbus_backend_keeps_its_connection_as_bus() -> None:
    # The connection is made on the first send; its attribute is named where it is made.
    assert "self.bus = await MessageBus().connect()" in inspect.getsource(DBusDesktopNotifier._init_dbus)
    assert notifier_compat.dbus_connection(DesktopNotifier(app_name="ralph-desk test")) is None
