"""The one way the window calls the services: errors are caught and shown in the window, not lost."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import TypeVar

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QGuiApplication

from ralph_desk.domain.listing import ItemError, errors_of
from ralph_desk.project import ProjectError
from ralph_desk.services.errors import ServiceError
from ralph_desk.store.errors import StoreError

log = logging.getLogger("ralph_desk.gui")

T = TypeVar("T")


class ActionRunner(QObject):
    """Runs a service call with a busy cursor; a refusal or failure becomes a message for the window."""

    sig_failed = Signal(str)
    """A call failed; the text says what was tried and why it failed."""
    sig_succeeded = Signal(str)
    """A change went through; the text confirms it (empty: nothing to say)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.failures: list[str] = []
        self._shown_left_out: set[str] = set()

    def run(self, what: str, call: Callable[[], T], done: str = "") -> T | None:
        """`call()` or None when it failed; `what` names the attempt ("answer question #4")."""
        QGuiApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            result = call()
        except (ServiceError, StoreError, ProjectError) as error:
            self._fail(f"Could not {what}: {error}")
            return None
        except Exception as error:  # the top of a user action: show it, log the traceback
            log.exception("could not %s", what)
            self._fail(f"Could not {what}: {type(error).__name__}: {error}")
            return None
        finally:
            QGuiApplication.restoreOverrideCursor()
        if done:
            self.sig_succeeded.emit(done)
        return result

    def read(self, what: str, call: Callable[[], T], default: T) -> T:
        """`call()`, or `default` when reading failed (the failure is shown, as is each item left out)."""
        try:
            result = call()
        except Exception as error:  # the top of a refresh: show it
            self.report(what, error)
            return default
        self.left_out(what, errors_of(result))
        return result

    def left_out(self, what: str, errors: Iterable[ItemError]) -> None:
        """Show each item a list could not read (`what` names the read: "read the tasks"), once: a list is
        read again at every change, and the item stays unreadable until someone repairs it."""
        for error in errors:
            message = f"Could not {what} in full: {error} (left out)"
            if message not in self._shown_left_out:
                self._shown_left_out.add(message)
                self._fail(message)

    def report(self, what: str, error: BaseException) -> None:
        """Show why `what` failed: a refusal in its own words, anything else with its type (and logged)."""
        if isinstance(error, ServiceError | StoreError | ProjectError):
            self._fail(f"Could not {what}: {error}")
            return
        log.error("could not %s", what, exc_info=error)
        self._fail(f"Could not {what}: {type(error).__name__}: {error}")

    def fail(self, message: str) -> None:
        """Show a failure found outside a service call."""
        self._fail(message)

    def _fail(self, message: str) -> None:
        self.failures.append(message)
        self.sig_failed.emit(message)
