"""The window's one worker: service calls run on one thread beside the GUI thread, in order.

Anki's `CollectionOp` is the model: a pane hands the worker an operation and what to do with its
result; the operation runs off the GUI thread (so git, files and database work never freeze the
window), one at a time (so database work is serialised), and its result comes back on the GUI
thread. What an operation changed reaches the panes through the change feed, as every write does.
"""

from __future__ import annotations

import itertools
import logging
import queue
import traceback
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from PySide6.QtCore import QObject, QTimer, Signal

from ralph_desk.gui.actions import ActionRunner

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

    def __init__(self, runner: ActionRunner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self.pending = 0
        self.held = 0
        """Reads promised but not handed over yet (a paced read waiting for its turn)."""
        self._pool: ThreadPoolExecutor | None = ThreadPoolExecutor(1, thread_name_prefix="ralph-desk-worker")
        self._done: queue.SimpleQueue[_Outcome[Any]] = queue.SimpleQueue()
        self._requests: dict[int, _Request[Any]] = {}
        self._droppable: dict[int, Future[None]] = {}
        self._tickets = itertools.count(1)
        self._timer = QTimer(self)
        self._timer.setInterval(DELIVERY_MS)
        self._timer.timeout.connect(self._deliver)

    @property
    def idle(self) -> bool:
        """Whether no operation is promised, waiting, running or undelivered."""
        return self.pending == 0 and self.held == 0

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
    ) -> None:
        """Run `operation` on the worker, then `then(result)` on the GUI thread.

        A failure is shown instead (`what` names the attempt: "read the dashboard"), then `failed()`.
        A `keep` operation (the person's decision) still runs when the window closes before its turn.
        """
        if self._pool is None:
            log.debug("worker stopped: not running %s", what)
            return
        self.pending += 1
        ticket = next(self._tickets)
        self._requests[ticket] = _Request(what, operation, then, failed)
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
        if pool is not None:
            pool.shutdown(wait=wait)

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
                self._hand_over(self._requests.pop(outcome.ticket), outcome)
        finally:  # also when a pane's handler raised: the timer must not tick on for nothing
            if self.pending == 0 or self._pool is None:
                self._timer.stop()
                if self.idle or self._pool is None:
                    self.sig_idle.emit()

    def _hand_over(self, request: _Request[Any], outcome: _Outcome[Any]) -> None:
        if outcome.error is not None:
            self.runner.report(request.what, outcome.error)
            if request.failed is not None:
                request.failed()
        elif request.then is not None:
            request.then(outcome.result)
