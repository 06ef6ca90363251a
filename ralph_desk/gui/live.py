"""Live updates: follow the database's change log (every process writes it) and tell the panes.

The log is read on the window's worker, as every read is; the GUI thread only starts the reads and
hands on what they found.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QObject, Qt, QTimer, Signal

from ralph_desk.domain.records import Change

if TYPE_CHECKING:
    from ralph_desk.gui.backend import Database
    from ralph_desk.gui.worker import Worker

log = logging.getLogger("ralph_desk.gui.live")

POLL_INTERVAL_MS = 150
FAILING_INTERVAL_MS = 2000


@dataclass(frozen=True)
class _Read:
    """One read of the change log: the newest id and the changes after the last one, or why it failed."""

    newest: int
    changes: list[Change] = field(default_factory=list)
    error: str = ""


def _read(db: Database, since: int) -> _Read:
    """On the worker: the changes after `since`; a failure is the feed's health, not an error to show."""
    try:
        newest, changes = db.changes_since(since)
    except Exception as error:  # the top of a poll: reported as the feed's health, polling goes on
        log.warning("change poll failed", exc_info=True)
        return _Read(since, error=str(error))
    return _Read(newest, changes)


class ChangeFeed(QObject):
    """Polls `db.changes_since` on a timer; a write in this process triggers a poll at once.

    Every change is delivered once, from the change log, in order: in-process writes only make the
    next poll come sooner, so they are not reported twice.
    """

    sig_changed = Signal(object)
    """Topics (a `set[str]`) that changed since the last report."""
    sig_changes = Signal(object)
    """The changes themselves (a `list[Change]`), with the ids they touched."""
    sig_health = Signal(bool, str)
    """Whether polling works, and a line saying so (sent when that changes)."""
    _sig_local_write = Signal()

    def __init__(
        self, db: Database, worker: Worker, interval_ms: int = POLL_INTERVAL_MS, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.db = db
        self.worker = worker
        self.interval_ms = interval_ms
        self.last_id = 0
        self.healthy = True
        self.status = "not started"
        self.polls = 0
        self.last_change_at: float | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.poll)
        self._poll_queued = False
        self._reading = False
        self._again = False
        self._stopped = False
        # Queued: the database calls listeners on the writing thread; polls run on the GUI thread.
        self._sig_local_write.connect(self._poll_soon, Qt.ConnectionType.QueuedConnection)
        self._unsubscribe: Callable[[], None] | None = None

    @property
    def running(self) -> bool:
        """Whether the feed is polling."""
        return self._timer.isActive()

    def start(self) -> None:
        """Report only what changes from now on (from the newest change the worker finds), polling."""
        self._stopped = False
        self._unsubscribe = self.db.subscribe(self._on_local_write)
        self.worker.submit("read the change log", self.db.latest_change_id, self._started)

    def _started(self, latest: int) -> None:
        if self._stopped:
            return
        self.last_id = latest
        self._timer.start()
        self._set_health(True, f"live · polling every {self.interval_ms} ms")
        log.info("following changes after #%d every %d ms", self.last_id, self.interval_ms)

    def stop(self) -> None:
        """Stop polling and listening (also safe once Qt has deleted the feed with its window)."""
        self._stopped = True
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if shiboken6.isValid(self):
            self._timer.stop()

    def poll(self) -> None:
        """Read the change log once on the worker; what is new is reported when the read is in."""
        self._poll_queued = False
        if self._reading:
            self._again = True  # one read at a time: the next starts when this one is in
            return
        self._reading = True
        self.polls += 1
        db, since = self.db, self.last_id
        self.worker.submit("read the change log", lambda: _read(db, since), self._take, self._failed)

    def _take(self, read: _Read) -> None:
        self._reading = False
        if self._stopped:
            return
        if read.error:
            self._timer.setInterval(FAILING_INTERVAL_MS)
            self._set_health(False, f"live updates failing: {read.error}")
            return
        if not self.healthy:
            self._timer.setInterval(self.interval_ms)
            self._set_health(True, f"live · polling every {self.interval_ms} ms")
        self.last_id = read.newest
        if read.changes:
            self.last_change_at = time.time()
            self.sig_changes.emit(read.changes)
            self.sig_changed.emit({change.topic for change in read.changes})
        if self._again:
            self._again = False
            self._poll_soon()

    def _failed(self) -> None:
        self._reading = False

    def _on_local_write(self, _changes: list[Change]) -> None:
        # Called on the writing thread: a feed deleted with its window must not fail the write.
        if shiboken6.isValid(self):
            self._sig_local_write.emit()

    def _poll_soon(self) -> None:
        if not self._poll_queued and self.running:
            self._poll_queued = True
            QTimer.singleShot(0, self.poll)

    def _set_health(self, healthy: bool, status: str) -> None:
        changed = healthy != self.healthy or status != self.status
        self.healthy = healthy
        self.status = status
        if changed:
            self.sig_health.emit(healthy, status)
