"""Text that arrives fast (a check printing thousands of lines) shown in pieces a few times a second.

A check's output comes in as many small pieces as its process flushes, from the loop's events on the GUI
thread or from the worker's thread. Shown piece by piece, each one lays the view out again; gathered here
and handed on at most every `interval_ms`, the window lays it out a few times a second whatever the rate,
and keeps only the end when more arrives between two showings than a view keeps anyway.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

INTERVAL_MS = 100
LIMIT_CHARS = 64_000
CUT_NOTE = "… (earlier output not shown here: the full log has it)\n"


class TextFeed(QObject):
    """Gathers text from any thread; `show` gets what came since, on the GUI thread, every `interval_ms`.

    Made on the GUI thread. Text added there starts the timer; text from another thread comes between
    `hold` and `release`, which keep the timer running.
    """

    def __init__(
        self,
        show: Callable[[str], None],
        interval_ms: int = INTERVAL_MS,
        limit: int = LIMIT_CHARS,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._show = show
        self.limit = limit
        self._lock = threading.Lock()
        self._pieces: list[str] = []
        self._size = 0
        self._cut = False
        self._held = False
        self._gui_thread = threading.get_ident()
        self._ticking = False
        """Whether the timer runs (kept here: a piece added costs no call into Qt)."""
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.flush)

    def add(self, text: str) -> None:
        """Take a piece of text (from any thread): shown with the next flush."""
        with self._lock:
            self._pieces.append(text)
            self._size += len(text)
            if self._size > 2 * self.limit:  # more than a view keeps: only the end is worth holding
                kept = "".join(self._pieces)[-self.limit :]
                self._pieces, self._size, self._cut = [kept], len(kept), True
        if not self._ticking and threading.get_ident() == self._gui_thread:
            self._ticking = True
            self._timer.start()

    def hold(self) -> None:
        """On the GUI thread: text comes from another thread until `release` (flushing goes on meanwhile)."""
        self._held = self._ticking = True
        self._timer.start()

    def release(self) -> None:
        """On the GUI thread: no more text comes from another thread; show what is left."""
        self._held = False
        self.flush()

    def flush(self) -> None:
        """Show what came since the last flush (the timer stops once nothing comes)."""
        with self._lock:
            pieces, cut = self._pieces, self._cut
            self._pieces, self._size, self._cut = [], 0, False
        if not pieces:
            if not self._held:
                self._ticking = False
                self._timer.stop()
            return
        self._show((CUT_NOTE if cut else "") + "".join(pieces))

    def clear(self) -> None:
        """Forget what was not shown yet."""
        with self._lock:
            self._pieces, self._size, self._cut = [], 0, False
