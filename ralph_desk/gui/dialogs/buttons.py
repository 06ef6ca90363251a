"""A dialog's Cancel and action buttons, with Enter pressing the action (or, for an action that loses work,
Cancel): never nothing."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QPlainTextEdit, QPushButton

ENTER_KEYS = (Qt.Key.Key_Return, Qt.Key.Key_Enter)


class _DefaultOnShow(QObject):
    """Makes the action the dialog's default as it shows: Qt ties a default to a dialog only once the
    button is inside it, and any other auto-default button that takes focus would take Enter away."""

    def __init__(self, dialog: QDialog, action: QPushButton) -> None:
        # The dialog is only the parent, never an attribute: dialog → filter → dialog would be a cycle,
        # and the garbage collector clears a cycle's Python side while Qt still calls the filter.
        super().__init__(dialog)
        self._action = action

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """On the dialog's Show: only the action is (auto-)default."""
        if event.type() == QEvent.Type.Show and watched is self.parent():
            for button in watched.findChildren(QPushButton):
                button.setAutoDefault(button is self._action)
            self._action.setDefault(True)
        return False


def action_buttons(
    dialog: QDialog, action: str, enter_cancels: bool = False
) -> tuple[QDialogButtonBox, QPushButton]:
    """Cancel and `action` (which accepts the dialog), Enter pressing `action` whenever it is enabled; or
    Cancel, when `enter_cancels` (an action that loses work is never done by Enter)."""
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
    button = buttons.addButton(action, QDialogButtonBox.ButtonRole.AcceptRole)
    buttons.accepted.connect(dialog.accept)
    buttons.rejected.connect(dialog.reject)
    cancel = buttons.button(QDialogButtonBox.StandardButton.Cancel)
    dialog.installEventFilter(_DefaultOnShow(dialog, cancel if enter_cancels else button))
    return buttons, button


class _SubmitOnEnter(QObject):
    """Enter in a text box presses the action; Shift+Enter still starts a new line."""

    def __init__(self, edit: QPlainTextEdit, action: QPushButton) -> None:
        super().__init__(edit)
        self._action = action

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Take a plain Enter; let everything else through."""
        if event.type() != QEvent.Type.KeyPress or not isinstance(event, QKeyEvent):
            return False
        if event.key() not in ENTER_KEYS or event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            return False
        if self._action.isEnabled():
            self._action.click()
        return True


def submit_on_enter(edit: QPlainTextEdit, action: QPushButton) -> None:
    """Let Enter in `edit` press `action` (a one-box dialog such as a reason); Shift+Enter breaks the line."""
    edit.installEventFilter(_SubmitOnEnter(edit, action))
