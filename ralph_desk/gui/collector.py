"""Python's cyclic garbage collection, run on the GUI thread only (qutebrowser does the same)."""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

CHECK_MS = 25
"""Often enough that each young collection stays small (a few thousand objects, a few ms)."""
RESCAN_EVERY = 80  # with checks every 25 ms: a whole-heap rescan as seldom as at 20 × 100 ms
"""Full collections between two that scan the whole heap again (frozen survivors included)."""


def freeze_start_up() -> None:
    """Freeze what start-up made (modules, the store, the widgets): collections skip it until a rescan."""
    gc.freeze()


class GuiThreadCollector(QObject):
    """Turns automatic collection off and collects on a GUI-thread timer, in short steps.

    Automatic collection runs on whichever thread allocates: an MCP request's, the loop's or the
    window's worker. A cycle holding a QObject collected there destroys that QObject there; Qt cannot
    stop its timers from another thread and later dispatches one to the freed object, a crash seen
    while a loop runs under load.

    A full collection scans every object the process holds (~100 ms with a window open on a loaded
    machine: a frozen window). So what survives one is frozen (`gc.freeze`) and later full
    collections scan only what is newer; every `RESCAN_EVERY`-th thaws the heap first, so that
    cycles among old objects are still freed, at a cost paid once in many minutes.
    """

    def __init__(self, parent: QObject | None = None, interval_ms: int = CHECK_MS) -> None:
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.collect_due)
        self.full_collections = 0
        gc.disable()
        self._timer.start()

    def collect_due(self) -> None:
        """Collect the oldest generation whose count passed its threshold, once, as Python would."""
        thresholds, counts = gc.get_threshold(), gc.get_count()
        if counts[0] <= thresholds[0]:
            return
        if counts[1] <= thresholds[1]:
            gc.collect(0)
        elif counts[2] <= thresholds[2]:
            gc.collect(1)
        else:
            self.full_collections += 1
            if self.full_collections % RESCAN_EVERY == 0:
                gc.unfreeze()
            gc.collect(2)
            gc.freeze()

    def stop(self) -> None:
        """Give collection back to Python (collecting the whole heap once here first)."""
        self._timer.stop()
        gc.unfreeze()
        gc.collect()
        gc.enable()
