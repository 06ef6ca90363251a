"""Inbox decisions held for a few seconds so that they can be undone before they reach the database."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtGui import QKeyEvent, QKeySequence
from PySide6.QtWidgets import QApplication, QLineEdit, QPlainTextEdit, QTextEdit, QWidget

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


def text_undo_available(widget: QObject | None) -> bool:
    """Whether `widget` is a text box with edits of its own to undo (then Ctrl+Z undoes typing)."""
    if isinstance(widget, QLineEdit):
        return not widget.isReadOnly() and widget.isUndoAvailable()
    if isinstance(widget, QTextEdit | QPlainTextEdit):
        return not widget.isReadOnly() and widget.document().isUndoAvailable()
    return False


class UndoKey(QObject):
    """Lets Ctrl+Z reach the window's Undo while a decision is held, wherever the keyboard is.

    A text box claims Ctrl+Z for itself; it keeps it only while it has typing of its own to undo
    (that undo comes first, the next Ctrl+Z takes the decision back).
    """

    def __init__(self, pending: PendingActions, window: QWidget) -> None:
        super().__init__(window)
        self.pending = pending
        self.window = window
        app = QApplication.instance()
        if app is not None:
            app.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Refuse a text box's claim on Ctrl+Z when it has nothing to undo and a decision is held."""
        if (
            event.type() is QEvent.Type.ShortcutOverride
            and self.pending.held is not None
            and isinstance(event, QKeyEvent)
            and event.matches(QKeySequence.StandardKey.Undo)
            and isinstance(watched, QWidget)
            and watched.window() is self.window
            and not text_undo_available(watched)
        ):
            event.ignore()
            return True
        return False
