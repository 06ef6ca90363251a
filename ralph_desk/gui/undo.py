"""Inbox decisions held for a few seconds so that they can be undone before they reach the database."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, QTimer

from ralph_desk.gui.widgets.undo_toast import UndoToast

UNDO_MS = 5000


@dataclass(frozen=True)
class Held:
    """One decision: what it does once its time is up, and how its item is shown again on Undo."""

    text: str
    commit: Callable[[], None]
    restore: Callable[[], None]


class PendingActions(QObject):
    """Holds one decision at a time; a newer one, the timer or the window's close commits it."""

    def __init__(self, toast: UndoToast, delay_ms: int = UNDO_MS, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.toast = toast
        self.held: Held | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(delay_ms)
        self._timer.timeout.connect(self.commit)
        toast.sig_undo_requested.connect(self.undo)

    def hold(self, text: str, commit: Callable[[], None], restore: Callable[[], None]) -> None:
        """Show `text` with Undo; `commit()` runs once the time is up unless undone."""
        self.commit()
        self.held = Held(text, commit, restore)
        self.toast.show_notice(f"{text} — Undo within {UNDO_MS // 1000} s")
        self._timer.start()

    def commit(self) -> None:
        """Do the held decision now."""
        held, self.held = self.held, None
        self._timer.stop()
        self.toast.hide()
        if held is not None:
            held.commit()

    def undo(self) -> None:
        """Drop the held decision and show its item again."""
        held, self.held = self.held, None
        self._timer.stop()
        self.toast.hide()
        if held is not None:
            held.restore()
