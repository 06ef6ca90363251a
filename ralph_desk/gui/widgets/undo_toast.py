"""A notice floating over the bottom of a window, with Undo: it moves nothing on the page."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

MARGIN = 16


class UndoToast(QFrame):
    """What was just done and an Undo button, over the host's bottom edge (not in any layout)."""

    sig_undo_requested = Signal()
    """Undo what the notice says was done."""

    def __init__(self, host: QWidget) -> None:
        super().__init__(host)
        self.setObjectName("undoToast")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.text = QLabel()
        self.undo_button = QPushButton("Undo")
        self.undo_button.setToolTip("Take it back (Ctrl+Z)")
        self.undo_button.clicked.connect(self.sig_undo_requested)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(14, 8, 8, 8)
        layout.setSpacing(12)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.undo_button)
        host.installEventFilter(self)
        self.hide()

    def show_notice(self, text: str) -> None:
        """Show `text` with Undo, above everything in the host."""
        self.text.setText(text)
        self.adjustSize()
        self._place()
        self.show()
        self.raise_()

    def _place(self) -> None:
        host = self.parentWidget()
        if host is None:
            return
        width = min(self.sizeHint().width(), host.width() - 2 * MARGIN)
        self.resize(width, self.sizeHint().height())
        self.move((host.width() - width) // 2, host.height() - self.height() - MARGIN)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Follow the host's size."""
        if watched is self.parentWidget() and event.type() == QEvent.Type.Resize and self.isVisible():
            self._place()
        return False
