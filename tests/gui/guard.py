"""A guard on the services: a call the window makes on the GUI thread is caught, with where it came from.

Every service method (and the database's reads and writes) of one `Services` is wrapped. A call on
the GUI thread is a fault when the nearest caller outside the layers below the window (services,
store, vcs, project, domain) is window code: the window must hand its calls to the worker. The loop
(which runs on the window's event loop with threads of its own) and the tests themselves may call.
"""

from __future__ import annotations

import functools
import inspect
import sys
import threading
from collections.abc import Callable
from typing import Any

from ralph_desk.services.container import Services

BELOW = (
    "ralph_desk.services",
    "ralph_desk.store",
    "ralph_desk.vcs",
    "ralph_desk.project",
    "ralph_desk.domain",
)
SERVICES = (
    "features",
    "disciplines",
    "tasks",
    "comments",
    "signals",
    "settling",
    "inbox",
    "sessions",
    "project",
    "progress",
    "state_files",
    "workspaces",
    "reviews",
    "retiring",
    "checks",
)
WINDOW = ("ralph_desk.gui", "ralph_desk.app")
DATABASE = ("read", "write", "changes_since", "latest_change_id")


class GuiThreadGuard:
    """Wraps a `Services`; `faults` lists each call window code made on the GUI thread."""

    def __init__(self, services: Services) -> None:
        self.faults: list[str] = []
        self._gui_thread = threading.main_thread()
        for name in SERVICES:
            self._wrap_all(getattr(services, name), type(getattr(services, name)).__name__)
        for name in DATABASE:
            self._wrap(services.db, name, "Database")

    def _wrap_all(self, service: object, owner: str) -> None:
        for name, _member in inspect.getmembers(type(service), inspect.isfunction):
            if not name.startswith("_"):
                self._wrap(service, name, owner)

    def _wrap(self, target: object, name: str, owner: str) -> None:
        # Looked up at each call: a test may still patch the method on the class.
        unbound: Callable[..., Any] = getattr(type(target), name)

        @functools.wraps(unbound)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            if threading.current_thread() is self._gui_thread:
                caller = _window_caller()
                if caller:
                    fault = f"{owner}.{name} called on the GUI thread from {caller}"
                    self.faults.append(fault)
                    raise AssertionError(fault)
            return getattr(type(target), name)(target, *args, **kwargs)

        setattr(target, name, guarded)


def _window_caller() -> str:
    """The nearest caller outside the layers below the window, when it is window code (else empty)."""
    frame = sys._getframe(2)
    while frame is not None:
        module = str(frame.f_globals.get("__name__", ""))
        if not module.startswith(BELOW) and module != __name__ and not module.startswith("contextlib"):
            if module.startswith(WINDOW):
                return f"{module}:{frame.f_lineno} ({frame.f_code.co_name})"
            return ""
        frame = frame.f_back  # type: ignore[assignment]
    return ""
