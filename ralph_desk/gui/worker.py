"""The one way from the window to the services: operations run on one thread beside the GUI thread.

Anki's `CollectionOp` is the model: a pane hands the worker an operation and what to do with its
result; the operation runs off the GUI thread (so git, files and database work never freeze the
window), one at a time (so database work is serialised), and its result comes back on the GUI
thread, where the pane applies it. A failure is shown in the window instead; a person's action keeps
the busy cursor until its result is in. What an operation changed also reaches the panes through the
change feed, as every write does.
"""

from __future__ import annotations

import itertools
import logging
import queue
import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication

from ralph_desk.domain.listing import ItemError, errors_of
from ralph_desk.gui.backend import is_refusal

log = logging.getLogger("ralph_desk.gui.worker")

T = TypeVar("T")
DELIVERY_MS = 5


@dataclass(frozen=True)
class _Request(Generic[T]):
    """An operation handed over, kept on the GUI thread until its outcome is delivered."""

    what: str
    operation: Callable[[], T]
    then: Callable[[T], None] | None
    failed: Callable[[], None] | None
    done: str
    busy: bool


@dataclass(frozen=True)
class _Outcome(Generic[T]):
    """What an operation gave back: its result or its error."""

    ticket: int
    result: T | None = None
    error: BaseException | None = None


def _run(done: queue.SimpleQueue[_Outcome[Any]], ticket: int, handed: list[Callable[[], T]]) -> None:
    """On the worker thread: run the operation; the outcome waits in `done`.

    An operation must not touch a Qt object (not even an attribute of a QObject subclass): the
    window may delete it meanwhile on the GUI thread. Nor may this thread hold the last reference
    to one: a QObject (or a closure over one) released here would be destroyed here, and Qt aborts
    on a timer stopped from another thread. So the operation is borrowed from the GUI thread, which
    keeps it until delivery, and an error leaves with its traceback as text, not as frames.
    """
    operation = handed.pop()
    try:
        outcome: _Outcome[Any] = _Outcome(ticket, result=operation())
    except Exception as error:  # the top of an operation: the GUI thread reports it
        error.add_note("".join(traceback.format_tb(error.__traceback__)).rstrip())
        outcome = _Outcome(ticket, error=error.with_traceback(None))
    del operation
    done.put(outcome)


class Worker(QObject):
    """Runs operations one at a time on a thread of its own; results are delivered on the GUI thread.

    The thread only puts outcomes in a queue, which a timer of the GUI thread empties while work is
    pending: a window closed meanwhile has nothing of Qt's that the thread could reach.
    """

    sig_idle = Signal()
    """Every operation handed over so far has finished and been delivered."""
    sig_failed = Signal(str)
    """An operation failed; the text says what was tried and why it failed."""
    sig_succeeded = Signal(str)
    """A change went through; the text confirms it."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.failures: list[str] = []
        """Every failure shown, in order."""
        self._shown_left_out: set[str] = set()
        self.busy = 0
        """A person's actions under way: the cursor says so until their results are in."""
        self.pending = 0
        self.held = 0
        """Reads promised but not handed over yet (a paced read waiting for its turn)."""
        self._pool: ThreadPoolExecutor | None = ThreadPoolExecutor(1, thread_name_prefix="ralph-desk-worker")
        self._long: ThreadPoolExecutor | None = None
        """The thread of long operations (checks run for minutes): reads go on beside them."""
        self._stops: dict[int, Callable[[], None]] = {}
        self._done: queue.SimpleQueue[_Outcome[Any]] = queue.SimpleQueue()
        self._requests: dict[int, _Request[Any]] = {}
        self._droppable: dict[int, Future[None]] = {}
        self._tickets = itertools.count(1)
        self._timer = QTimer(self)
        self._timer.setInterval(DELIVERY_MS)
        self._timer.timeout.connect(self._deliver)
        self._when_idle: list[Callable[[], None]] = []
        self.sig_idle.connect(self._idle)

    @property
    def idle(self) -> bool:
        """Whether no operation is promised, waiting, running or undelivered."""
        return self.pending == 0 and self.held == 0

    def when_idle(self, then: Callable[[], None]) -> None:
        """`then()` once every operation handed over so far has been delivered (at once when idle)."""
        if self.idle:
            then()
            return
        self._when_idle.append(then)

    def _idle(self) -> None:
        waiting, self._when_idle = self._when_idle, []
        for then in waiting:
            then()

    def hold(self) -> None:
        """Promise an operation that will be handed over later: the worker is not idle until then."""
        self.held += 1

    def release(self) -> None:
        """The promised operation was handed over (or will not be)."""
        self.held -= 1
        if self.idle:
            self.sig_idle.emit()

    def submit(
        self,
        what: str,
        operation: Callable[[], T],
        then: Callable[[T], None] | None = None,
        failed: Callable[[], None] | None = None,
        *,
        keep: bool = False,
        done: str = "",
        busy: bool = False,
        stop: Callable[[], None] | None = None,
    ) -> None:
        """Run `operation` on the worker, then `then(result)` on the GUI thread.

        A failure is shown instead (`what` names the attempt: "read the dashboard"), then `failed()`;
        each item a listing left out is shown once. `done` confirms a change that went through; a
        `busy` operation (a person's action) shows the busy cursor until its result is in. A `keep`
        operation (the person's decision) still runs when the window closes before its turn. An operation
        given a `stop` is long (minutes: running checks): it runs on a thread of its own, one at a time, so
        that reads go on meanwhile, and `stop()` (from the GUI thread) asks it to end when the window closes.
        """
        if self._pool is None:
            log.debug("worker stopped: not running %s", what)
            return
        self.pending += 1
        if busy:
            self._set_busy(+1)
        ticket = next(self._tickets)
        self._requests[ticket] = _Request(what, operation, then, failed, done, busy)
        if stop is not None:
            if self._long is None:
                self._long = ThreadPoolExecutor(1, thread_name_prefix="ralph-desk-worker-long")
            self._stops[ticket] = stop
            future = self._long.submit(_run, self._done, ticket, [operation])
        else:
            future = self._pool.submit(_run, self._done, ticket, [operation])
        if not keep:
            self._droppable[ticket] = future
        if not self._timer.isActive():
            self._timer.start()

    def shutdown(self, wait: bool = True) -> None:
        """Deliver no result and start no operation but those kept; `wait` for them and the one under way."""
        pool, self._pool = self._pool, None
        for future in self._droppable.values():
            future.cancel()
        self._droppable.clear()
        for stop in self._stops.values():
            stop()
        self._stops.clear()
        while self.busy:
            self._set_busy(-1)
        if pool is not None:
            pool.shutdown(wait=wait)
        long, self._long = self._long, None
        if long is not None:
            long.shutdown(wait=wait)

    def _deliver(self) -> None:
        # One outcome a tick: a paint or a click waits for at most one pane's update, not for all.
        try:
            outcome = self._done.get_nowait() if self._pool is not None else None
        except queue.Empty:
            outcome = None
        try:
            if outcome is not None:
                self.pending -= 1
                self._droppable.pop(outcome.ticket, None)
                self._stops.pop(outcome.ticket, None)
                self._hand_over(self._requests.pop(outcome.ticket), outcome)
        finally:  # also when a pane's handler raised: the timer must not tick on for nothing
            if self.pending == 0 or self._pool is None:
                self._timer.stop()
                if self.idle or self._pool is None:
                    self.sig_idle.emit()

    def _hand_over(self, request: _Request[Any], outcome: _Outcome[Any]) -> None:
        if request.busy:
            self._set_busy(-1)
        if outcome.error is not None:
            self.report(request.what, outcome.error)
            if request.failed is not None:
                request.failed()
            return
        self.left_out(request.what, errors_of(outcome.result))
        if request.done:
            self.sig_succeeded.emit(request.done)
        if request.then is not None:
            request.then(outcome.result)

    def _set_busy(self, step: int) -> None:
        self.busy += step
        if step > 0 and self.busy == 1:
            QGuiApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        elif step < 0 and self.busy == 0:
            QGuiApplication.restoreOverrideCursor()

    # --- what the window is told ----------------------------------------------------------------

    def report(self, what: str, error: BaseException) -> None:
        """Show why `what` failed: a refusal in its own words, anything else with its type (and logged)."""
        if is_refusal(error):
            self.fail(f"Could not {what}: {error}")
            return
        log.error("could not %s", what, exc_info=error)
        self.fail(f"Could not {what}: {type(error).__name__}: {error}")

    def left_out(self, what: str, errors: Iterable[ItemError]) -> None:
        """Show each item a list could not read (`what` names the read: "read the tasks"), once: a list is
        read again at every change, and the item stays unreadable until someone repairs it."""
        for error in errors:
            message = f"Could not {what} in full: {error} (left out)"
            if message not in self._shown_left_out:
                self._shown_left_out.add(message)
                self.fail(message)

    def fail(self, message: str) -> None:
        """Show a failure (found by an operation or on the GUI thread)."""
        self.failures.append(message)
        self.sig_failed.emit(message)

    def succeed(self, message: str) -> None:
        """Confirm a change that went through."""
        self.sig_succeeded.emit(message)
