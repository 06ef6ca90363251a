"""Every private part of desktop-notifier the window relies on, in one place, each with a test of its shape.

desktop-notifier 6 has no close and no public way to its backend; `tests/gui/test_notifier_compat.py`
fails when an upgrade moves or renames one of these, so that it is met here and nowhere else.
"""

from __future__ import annotations

from typing import Any

from desktop_notifier import DesktopNotifier
from desktop_notifier.backends.base import DesktopNotifierBackend
from desktop_notifier.main import get_backend_class


def backend_name() -> str:
    """The name of the backend class desktop-notifier picks for this platform."""
    return get_backend_class().__name__


def backend(notifier: DesktopNotifier) -> DesktopNotifierBackend:
    """The platform backend a notifier sends through."""
    return notifier._backend


def dbus_connection(notifier: DesktopNotifier) -> Any | None:
    """The D-Bus connection the freedesktop backend keeps as `bus` once it has sent, else None."""
    return getattr(backend(notifier), "bus", None)
