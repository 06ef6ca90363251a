"""The new-record dialog: a display name and the name made from it; subclasses add their own fields."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import SignalInstance
from PySide6.QtWidgets import (
    QDialog,
    QFormLayout,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from ralph_desk.gui.dialogs.buttons import action_buttons
from ralph_desk.gui.widgets.common import label

NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


def name_from(display_name: str) -> str:
    """A record name made from a display name ("Tide charts" → "tide-charts")."""
    return re.sub(r"[^a-z0-9]+", "-", display_name.casefold()).strip("-")[:64]


class NewRecordDialog(QDialog):
    """A display name and a unique name (suggested from it until typed by hand); Create once both hold."""

    def __init__(
        self, noun: str, example: str, taken: list[str], width: int, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.noun = noun
        self.setWindowTitle(f"New {noun}")
        self.setMinimumWidth(width)
        self.taken = set(taken)
        self.display_name = QLineEdit()
        self.display_name.setPlaceholderText(example)
        self.name = QLineEdit()
        self.name.setPlaceholderText(name_from(example))
        self.problem = label(name="muted", wrap=True)
        buttons, self.create_button = action_buttons(self, "Create")
        self._named_by_hand = False
        self.display_name.textChanged.connect(self._suggest_name)
        self.name.textEdited.connect(self._name_edited)
        self.name.textChanged.connect(self._check)
        self.form = QFormLayout()
        self.form.addRow("Display name", self.display_name)
        self.form.addRow("Name", self.name)
        layout = QVBoxLayout(self)
        layout.addLayout(self.form)
        layout.addWidget(self.problem)
        layout.addWidget(buttons)

    def add_fields(
        self, rows: Sequence[tuple[str, QWidget]], checked_on: Sequence[SignalInstance] = ()
    ) -> None:
        """Add the subclass's form rows, check again when one of `checked_on` fires, and check now."""
        for title, widget in rows:
            self.form.addRow(title, widget)
        for signal in checked_on:
            signal.connect(self._check)
        self._check()

    def values(self) -> dict[str, Any]:
        """The name and display name, as the service's `create` takes them."""
        return {"name": self.name.text().strip(), "display_name": self.display_name.text().strip()}

    def extra_problem(self) -> str:
        """What is wrong with the subclass's own fields (empty: nothing)."""
        return ""

    def extra_ready(self) -> bool:
        """Whether the subclass's required fields are filled in."""
        return True

    def _suggest_name(self, text: str) -> None:
        if not self._named_by_hand:
            self.name.setText(name_from(text))
        self._check()

    def _name_edited(self, _text: str) -> None:
        self._named_by_hand = True

    def _check(self, *_args: object) -> None:
        name = self.name.text().strip()
        if name and not NAME_PATTERN.match(name):
            problem = "The name takes lower-case letters, digits, - and _ (up to 64)."
        elif name in self.taken:
            problem = f"A {self.noun} named {name} exists already."
        else:
            problem = self.extra_problem()
        self.problem.setText(problem)
        ready = name and self.display_name.text().strip() and self.extra_ready()
        self.create_button.setEnabled(bool(ready and not problem))
