"""A non-modal bar at the top of the window for errors and notices."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, QTimer
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

from ralph_desk.gui import icons, theme

AUTO_HIDE_MS = 6000
LEVEL_ICONS = {"info": "info", "success": "success", "warning": "warning", "error": "error"}


class MessageBar(QFrame):
    """Shows one message (the latest) until closed; notices hide by themselves, errors stay."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messageBar")
        self.level = "info"
        self.history: list[tuple[str, str]] = []
        self._icon = QLabel()
        self._text = QLabel()
        self._text.setWordWrap(True)
        self._text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._close = QToolButton()
        self._close.setAutoRaise(True)
        self._close.setToolTip("Close this message (Esc)")
        self._close.setIconSize(QSize(14, 14))
        self._close.clicked.connect(self.hide)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 8, 8, 8)
        layout.setSpacing(10)
        layout.addWidget(self._icon, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self._text, 1)
        layout.addWidget(self._close, 0, Qt.AlignmentFlag.AlignTop)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.hide)
        self.hide()

    @property
    def text(self) -> str:
        """The message shown (or last shown)."""
        return self._text.text()

    def show_message(self, text: str, level: str = "error") -> None:
        """Show `text` at `level` (info, success, warning, error); notices hide after a few seconds."""
        self.level = level
        self.history.append((level, text))
        self._text.setText(text)
        self._restyle()
        self.show()
        if level in ("info", "success"):
            self._timer.start(AUTO_HIDE_MS)
        else:
            self._timer.stop()

    def error(self, text: str) -> None:
        """Show an error; it stays until closed."""
        self.show_message(text, "error")

    def info(self, text: str) -> None:
        """Show a notice that hides by itself."""
        self.show_message(text, "info")

    def success(self, text: str) -> None:
        """Show a confirmation that hides by itself."""
        self.show_message(text, "success")

    def refresh_style(self) -> None:
        """Redraw in the current palette."""
        self._restyle()

    def _restyle(self) -> None:
        color = theme.level_color(self.level)
        background = theme.pill_background(color).name(QColor.NameFormat.HexArgb)
        theme.style(
            self,
            f"QFrame#messageBar {{ background: {background}; border: 1px solid {color.name()};"
            " border-radius: 6px; }",
        )
        self._icon.setPixmap(icons.pixmap(LEVEL_ICONS.get(self.level, "info"), 18, color))
        self._close.setIcon(icons.icon("close"))
