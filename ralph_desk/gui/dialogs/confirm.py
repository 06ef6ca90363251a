"""A confirmation that does not block: shown with `open()`, it calls back only when the person agrees."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QAbstractButton, QMessageBox, QWidget


class ConfirmBox(QMessageBox):
    """Asks once more before something that cannot be undone; `confirm_button` does it."""

    def __init__(
        self,
        title: str,
        text: str,
        action: str,
        on_confirm: Callable[[], None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.Cancel, parent)
        self.confirm_button = self.addButton(action, QMessageBox.ButtonRole.DestructiveRole)
        self.setDefaultButton(QMessageBox.StandardButton.Cancel)
        self._on_confirm = on_confirm
        self.buttonClicked.connect(self._clicked)

    def _clicked(self, clicked: QAbstractButton) -> None:
        if clicked is self.confirm_button:
            self._on_confirm()


def confirm(
    parent: QWidget, title: str, text: str, action: str, on_confirm: Callable[[], None]
) -> ConfirmBox:
    """Open a confirmation over `parent` (window-modal, not blocking); returns it for tests to answer."""
    box = ConfirmBox(title, text, action, on_confirm, parent)
    box.open()
    return box
