"""Small building blocks shared by the panes: labels, buttons, a text box that sends on Ctrl+Enter."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QFont, QKeyEvent, QPalette
from PySide6.QtWidgets import (
    QComboBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QStyle,
    QStyleOptionComboBox,
    QToolButton,
    QWidget,
)

from ralph_desk.gui import icons, theme

BUTTON_ICON = QSize(16, 16)
SHRUNK_COMBO_CHARS = 7


# Font scale and weight per label style; muted styles use the palette's placeholder colour.
LABEL_STYLES: dict[str, tuple[float, bool, bool]] = {
    "heading": (1.45, True, False),
    "subheading": (1.0, True, True),
    "muted": (1.0, False, True),
    "tileValue": (1.9, True, False),
    "emptyTitle": (1.3, True, False),
    "emptyText": (1.0, False, True),
}


def style_label(widget: QLabel, name: str) -> None:
    """Give a label one of the `LABEL_STYLES`."""
    widget.setObjectName(name)
    scale, bold, muted = LABEL_STYLES[name]
    if scale != 1.0 or bold:
        font = QFont(widget.font())
        font.setPointSizeF(font.pointSizeF() * scale)
        font.setBold(bold)
        widget.setFont(font)
    if muted:
        widget.setForegroundRole(QPalette.ColorRole.PlaceholderText)


def label(text: str = "", name: str | None = None, wrap: bool = False, selectable: bool = False) -> QLabel:
    """A label with an optional style (heading, subheading, muted, tileValue, emptyTitle, emptyText)."""
    widget = QLabel(text)
    if name:
        style_label(widget, name)
    widget.setWordWrap(wrap)
    if selectable:
        widget.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if wrap:
        widget.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
    return widget


def link(text: str) -> QLabel:
    """A label whose links are reported through `linkActivated` (not opened in a browser)."""
    widget = QLabel(text)
    widget.setTextFormat(Qt.TextFormat.RichText)
    widget.setTextInteractionFlags(Qt.TextInteractionFlag.LinksAccessibleByMouse)
    widget.setOpenExternalLinks(False)
    return widget


def button(text: str, icon_name: str | None = None, tip: str = "", primary: bool = False) -> QPushButton:
    """A push button with an icon and a tooltip; `primary` marks the main action."""
    widget = QPushButton(text)
    if icon_name:
        widget.setIcon(icons.icon(icon_name, "#ffffff" if primary else None))
        widget.setIconSize(BUTTON_ICON)
    if tip:
        widget.setToolTip(tip)
    if primary:
        widget.setObjectName("primary")
        theme.style(widget, theme.PRIMARY_STYLE)
    return widget


def tool_button(icon_name: str, tip: str) -> QToolButton:
    """A flat icon button with a tooltip."""
    widget = QToolButton()
    widget.setIcon(icons.icon(icon_name))
    widget.setIconSize(BUTTON_ICON)
    widget.setAutoRaise(True)
    widget.setToolTip(tip)
    return widget


def mode_button(text: str, tip: str) -> QToolButton:
    """A flat checkable button with text, one of a few that choose how something is shown."""
    widget = QToolButton()
    widget.setText(text)
    widget.setToolTip(tip)
    widget.setCheckable(True)
    widget.setAutoRaise(True)
    return widget


def combo_width(combo: QComboBox) -> int:
    """The width a combo box needs to show its current choice whole (text, icon, frame and arrow)."""
    option = QStyleOptionComboBox()
    combo.initStyleOption(option)
    width = combo.fontMetrics().horizontalAdvance(combo.currentText())
    if not combo.itemIcon(combo.currentIndex()).isNull():
        width += combo.iconSize().width() + 4
    contents = QSize(width, combo.fontMetrics().height())
    return combo.style().sizeFromContents(QStyle.ContentsType.CT_ComboBox, option, contents, combo).width()


class ShrinkingComboBox(QComboBox):
    """A filter's combo box: as wide as the choice it shows when there is room, narrower (clipped) when not.

    Sized to the current choice, not the longest one, a row of filters fits a small window.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.currentIndexChanged.connect(lambda _index: self.updateGeometry())

    def sizeHint(self) -> QSize:
        """Room for the choice shown."""
        return QSize(combo_width(self), super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:
        """Room for a few characters, the icon and the arrow."""
        hint = super().minimumSizeHint()
        shrunk = self.fontMetrics().averageCharWidth() * SHRUNK_COMBO_CHARS + self.iconSize().width() + 32
        return QSize(min(hint.width(), shrunk), hint.height())


class SendingTextEdit(QPlainTextEdit):
    """A plain text box that sends on Ctrl+Enter; Tab moves focus instead of typing a tab."""

    sig_send_requested = Signal()
    """Ctrl+Enter was pressed."""

    def __init__(self, placeholder: str = "", lines: int = 3, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setPlaceholderText(placeholder)
        self.setTabChangesFocus(True)
        height = self.fontMetrics().lineSpacing() * lines + 14
        self.setFixedHeight(height)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        """Ctrl+Enter sends; every other key types."""
        enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        if enter and event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self.sig_send_requested.emit()
            return
        super().keyPressEvent(event)
