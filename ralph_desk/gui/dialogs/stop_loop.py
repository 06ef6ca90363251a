"""Stopping (or quitting) while an agent works: now, or once its session ends, or not at all."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

from PySide6.QtWidgets import QAbstractButton, QMessageBox, QWidget


class StopChoice(StrEnum):
    """When to stop the loop."""

    NOW = "now"
    AFTER_SESSION = "after_session"


class StopLoopBox(QMessageBox):
    """Asks when to stop; "after this session" is the default (Enter): the session's work is kept."""

    def __init__(
        self,
        verb: str,
        task: str,
        on_choice: Callable[[StopChoice], None],
        parent: QWidget | None = None,
    ) -> None:
        text = (
            f"An agent is working on {task}. {verb} now ends its session: the task goes back to pending "
            f"and what the session did so far is kept in the folder. Or let the session finish first."
        )
        super().__init__(
            QMessageBox.Icon.Question,
            f"{verb} while an agent works?",
            text,
            QMessageBox.StandardButton.Cancel,
            parent,
        )
        self.now_button = self.addButton(f"{verb} now", QMessageBox.ButtonRole.DestructiveRole)
        self.after_button = self.addButton(f"{verb} after this session", QMessageBox.ButtonRole.AcceptRole)
        self.setDefaultButton(self.after_button)
        self._on_choice = on_choice
        self.buttonClicked.connect(self._clicked)

    def _clicked(self, clicked: QAbstractButton) -> None:
        if clicked is self.now_button:
            self._on_choice(StopChoice.NOW)
        elif clicked is self.after_button:
            self._on_choice(StopChoice.AFTER_SESSION)


def ask_when_to_stop(
    parent: QWidget, verb: str, task: str, on_choice: Callable[[StopChoice], None]
) -> StopLoopBox:
    """Open the question over `parent` (window-modal, not blocking); returns it for tests to answer."""
    box = StopLoopBox(verb, task, on_choice, parent)
    box.open()
    return box
