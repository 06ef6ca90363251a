"""An empty state: an icon, what is (not) here, and what to do about it."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from ralph_desk.gui import icons, theme
from ralph_desk.gui.widgets.common import style_label

ICON_SIZE = 56
TEXT_WIDTH = 460


def _centred(widget: QWidget) -> QHBoxLayout:
    # The widget takes the room first, up to its maximum width; the stretches centre what is left.
    # Unlike fixed margins they shrink with the pane, so the text never holds the window wide.
    row = QHBoxLayout()
    row.addStretch(1)
    row.addWidget(widget, 100)
    row.addStretch(1)
    return row


class EmptyState(QWidget):
    """Centred guidance shown where a list or pane has nothing to show."""

    sig_action_requested = Signal()
    """The person clicked the action button."""

    def __init__(
        self,
        icon_name: str,
        title: str,
        text: str,
        action: str | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._icon_name = icon_name
        self._icon = QLabel()
        self._icon.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.title = QLabel(title)
        style_label(self.title, "emptyTitle")
        self.title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.title.setWordWrap(True)
        self.text = QLabel(text)
        style_label(self.text, "emptyText")
        self.text.setWordWrap(True)
        self.text.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text.setMaximumWidth(TEXT_WIDTH)
        self.button = QPushButton(action or "")
        self.button.setVisible(action is not None)
        self.button.clicked.connect(self.sig_action_requested)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(24, 24, 24, 24)
        layout.setSpacing(10)
        layout.addStretch(2)
        layout.addWidget(self._icon)
        layout.addWidget(self.title)
        layout.addLayout(_centred(self.text))
        layout.addWidget(self.button, 0, Qt.AlignmentFlag.AlignHCenter)
        layout.addStretch(3)
        self.refresh_style()

    def set_text(self, title: str, text: str) -> None:
        """Change what the empty state says."""
        self.title.setText(title)
        self.text.setText(text)

    def refresh_style(self) -> None:
        """Redraw the icon in the current palette."""
        self._icon.setPixmap(icons.pixmap(self._icon_name, ICON_SIZE, theme.muted()))
