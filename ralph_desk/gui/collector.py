"""Python's cyclic garbage collection, run on the GUI thread only (qutebrowser does the same)."""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

CHECK_MS = 100


class GuiThreadCollector(QObject):
    """Turns automatic collection off and collects, generation by generation, on a GUI-thread timer.

    Automatic collection runs on whichever thread allocates: an MCP request's, the loop's or the
    window's worker. A cycle holding a QObject collected there destroys that QObject there; Qt cannot
    stop its timers from another thread and later dispatches one to the freed object, a crash seen
    while a loop runs under load.
    """

    def __init__(self, parent: QObject | None = None, interval_ms: int = CHECK_MS) -> None:
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.collect_due)
        gc.disable()
        self._timer.start()

    def collect_due(self) -> None:
        """Collect each generation whose count passed its threshold, as automatic collection would."""
        thresholds, counts = gc.get_threshold(), gc.get_count()
        for generation in range(3):
            if counts[generation] <= thresholds[generation]:
                break
            gc.collect(generation)

    def stop(self) -> None:
        """Give collection back to Python (collecting once here first)."""
        self._timer.stop()
        gc.collect()
        gc.enable()
