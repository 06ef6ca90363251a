"""Paced reads: a pane's re-read runs one at a time and at most once per spacing, however often asked."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from PySide6.QtCore import QTimer

if TYPE_CHECKING:
    from ralph_desk.gui.worker import Worker

T = TypeVar("T")


class ReadPacer:
    """Starts a read when asked, unless one is under way or the last began less than `spacing_ms` ago.

    Asks made meanwhile are kept as one: the read starts again once, when the one under way has been
    shown and the spacing has passed. A loop writing fifty signals a second then costs a pane a few
    reads a second, not fifty (each read is worker time and GUI-thread time the window could not
    answer a click in); the read that does start sees everything asked for until then.
    """

    def __init__(self, worker: Worker, start_read: Callable[[], None], spacing_ms: int) -> None:
        self._worker = worker
        self._start_read = start_read
        self.spacing_ms = spacing_ms
        self.reading = False
        self.stale = False
        """Asked for while a read was under way or spaced out: read once more."""
        self._last_start = -float("inf")
        self._now = False
        """A person asked (Refresh): the next read does not wait for the spacing."""
        self._timer = QTimer(worker)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._start_due)

    @property
    def waiting(self) -> bool:
        """Whether a read is under way or asked for and not started yet."""
        return self.reading or self.stale

    def request(self, now: bool = False) -> None:
        """Read now, or once the read under way is shown and the spacing has passed (`now`: no spacing)."""
        self._now = self._now or now
        if self.reading:
            self.stale = True
            return
        remaining_ms = (
            0.0 if self._now else (self._last_start + self.spacing_ms / 1000 - time.monotonic()) * 1000
        )
        if remaining_ms > 0:
            self.stale = True
            if not self._timer.isActive():
                self._worker.hold()  # the worker is not idle while a read waits for its turn
                self._timer.start(max(1, int(remaining_ms + 0.5)))
            return
        self._start()

    def then(self, show: Callable[[T], None]) -> Callable[[T], None]:
        """`show` a read's result, then tell the pacer the read is over (also when showing fails)."""

        def show_and_finish(result: T) -> None:
            try:
                show(result)
            finally:
                self.finished()

        return show_and_finish

    def finished(self) -> None:
        """The read was shown (or failed): start the one asked for meanwhile, if any."""
        self.reading = False
        if self.stale:
            self.request()

    def _start_due(self) -> None:
        try:
            if self.stale and not self.reading:
                self._start()
        finally:
            self._worker.release()  # after the read was handed over: the worker never looks idle between

    def _start(self) -> None:
        held = self._timer.isActive()
        self._timer.stop()
        self.reading, self.stale, self._now = True, False, False
        self._last_start = time.monotonic()
        try:
            self._start_read()
        except BaseException:
            self.reading = False  # nothing was handed over: the next ask reads
            raise
        finally:
            if held:
                self._worker.release()
