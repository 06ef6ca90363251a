"""The window's one worker: service calls run on one thread beside the GUI thread, in order.

Anki's `CollectionOp` is the model: a pane hands the worker an operation and what to do with its
result; the operation runs off the GUI thread (so git, files and database work never freeze the
window), one at a time (so database work is serialised), and its result comes back on the GUI
thread. What an operation changed reaches the panes through the change feed, as every write does.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

from PySide6.QtCore import QObject, Qt, Signal

from ralph_desk.gui.actions import ActionRunner

log = logging.getLogger("ralph_desk.gui.worker")

T = TypeVar("T")


@dataclass(frozen=True)
class _Outcome(Generic[T]):
    """What an operation gave back: its result or its error, and who receives it."""

    what: str
    then: Callable[[T], None] | None
    failed: Callable[[], None] | None = None
    result: T | None = None
    error: BaseException | None = None


class Worker(QObject):
    """Runs operations one at a time on a thread of its own; results are delivered on the GUI thread."""

    sig_idle = Signal()
    """Every operation handed over so far has finished and been delivered."""
    _sig_finished = Signal(object)

    def __init__(self, runner: ActionRunner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self.pending = 0
        self._pool: ThreadPoolExecutor | None = ThreadPoolExecutor(1, thread_name_prefix="ralph-desk-worker")
        # Queued: the worker thread emits, the GUI thread delivers.
        self._sig_finished.connect(self._deliver, Qt.ConnectionType.QueuedConnection)

    @property
    def idle(self) -> bool:
        """Whether no operation is waiting, running or undelivered."""
        return self.pending == 0

    def submit(
        self,
        what: str,
        operation: Callable[[], T],
        then: Callable[[T], None] | None = None,
        failed: Callable[[], None] | None = None,
    ) -> None:
        """Run `operation` on the worker, then `then(result)` on the GUI thread.

        A failure is shown instead (`what` names the attempt: "read the dashboard"), then `failed()`.
        """
        if self._pool is None:
            log.debug("worker stopped: not running %s", what)
            return
        self.pending += 1
        self._pool.submit(self._run, _Outcome(what, then, failed), operation)

    def shutdown(self) -> None:
        """Finish the operation under way and run no other (their results are not delivered)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def _run(self, outcome: _Outcome[T], operation: Callable[[], T]) -> None:
        try:
            outcome = replace(outcome, result=operation())
        except Exception as error:  # the top of an operation: the GUI thread reports it
            outcome = replace(outcome, error=error)
        self._sig_finished.emit(outcome)

    def _deliver(self, outcome: _Outcome[Any]) -> None:
        self.pending -= 1
        try:
            if outcome.error is not None:
                self.runner.report(outcome.what, outcome.error)
                if outcome.failed is not None:
                    outcome.failed()
            elif outcome.then is not None:
                outcome.then(outcome.result)
        finally:
            if self.pending == 0:
                self.sig_idle.emit()
