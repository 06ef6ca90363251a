"""A non-modal bar floating over the top of the panes for errors and notices: it moves nothing on the page."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, QSize, Qt, QTimer
from PySide6.QtWidgets import QAbstractButton, QComboBox, QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

from ralph_desk.gui import icons, theme

AUTO_HIDE_MS = 6000
MARGIN = 16  # from the host's sides
TOP = 10  # from the host's top
GAP = 6  # from a control it keeps clear of
NARROW_SHARE = 0.6
"""The least share of the host's width a banner keeps when it narrows to stay clear of controls."""
LEVEL_ICONS = {"info": "info", "success": "success", "warning": "warning", "error": "error"}


class MessageBar(QFrame):
    """Shows one message (the latest) until closed; notices hide by themselves, errors stay.

    Over a host (`float_over`) it is in no layout: it floats above the host's top edge, as wide as the
    host, so that showing or hiding it moves nothing.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messageBar")
        self.floating = False
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
        self._place()
        self.show()
        self.raise_()
        if level in ("info", "success"):
            self._timer.start(AUTO_HIDE_MS)
        else:
            self._timer.stop()

    def float_over(self, host: QWidget) -> None:
        """Float over the top of `host` (out of any layout), following its size."""
        self.setParent(host)
        self.floating = True
        host.installEventFilter(self)
        self.hide()

    def _place(self) -> None:
        host = self.parentWidget()
        if host is None or not self.floating:
            return
        self.setGeometry(self._free_place(host))

    def _height_for(self, width: int) -> int:
        return self.heightForWidth(width) if self.hasHeightForWidth() else self.sizeHint().height()

    def _free_place(self, host: QWidget) -> QRect:
        """At the top, as wide as the host, unless that covers a control of the page: then narrower (left of
        the controls, when that leaves most of the width), else lower down, below them."""
        controls = _controls(host, self)
        full = max(host.width() - 2 * MARGIN, 0)
        top = TOP
        while top < host.height():
            place = QRect(MARGIN, top, full, self._height_for(full))
            hit = [rect for rect in controls if rect.intersects(place)]
            if not hit:
                return place
            narrow = min(rect.left() for rect in hit) - GAP - MARGIN
            if narrow >= full * NARROW_SHARE:
                narrower = QRect(MARGIN, top, narrow, self._height_for(narrow))
                if not any(rect.intersects(narrower) for rect in controls):
                    return narrower
            top = max(rect.bottom() for rect in hit) + GAP
        return QRect(MARGIN, TOP, full, self._height_for(full))  # no free room: the top, as before

    def refit(self) -> None:
        """Find the banner's place again (the page under it changed)."""
        if self.isVisible():
            self._place()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Follow the host's size."""
        if (
            self.floating
            and watched is self.parentWidget()
            and event.type() == QEvent.Type.Resize
            and self.isVisible()
        ):
            self._place()
        return False

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
        background = theme.solid_background(color).name()
        theme.style(
            self,
            f"QFrame#messageBar {{ background: {background}; border: 1px solid {color.name()};"
            " border-radius: 6px; }",
        )
        self._icon.setPixmap(icons.pixmap(LEVEL_ICONS.get(self.level, "info"), 18, color))
        self._close.setIcon(icons.icon("close"))


def _controls(host: QWidget, bar: QWidget) -> list[QRect]:
    """Where the buttons and choices shown on the host's page are (the bar's own excepted)."""
    found = []
    for widget in host.findChildren(QAbstractButton) + host.findChildren(QComboBox):
        if widget.isVisible() and not bar.isAncestorOf(widget) and widget.window() is host.window():
            found.append(QRect(widget.mapTo(host, QPoint(0, 0)), widget.size()))
    return found
