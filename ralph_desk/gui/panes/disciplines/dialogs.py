"""The new-discipline dialog: the fields a discipline cannot do without."""

from __future__ import annotations

import re
from typing import Any

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ralph_desk.gui.panes.disciplines.fields import ColorField
from ralph_desk.gui.widgets.common import label

DIALOG_WIDTH = 480
NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
COLOR_PATTERN = re.compile(r"^#[0-9a-f]{6}$")
DEFAULT_COLOR = "#64748b"
DEFAULT_ICON = "code"


def name_from(display_name: str) -> str:
    """A discipline name made from a display name ("Data science" → "data-science")."""
    return re.sub(r"[^a-z0-9]+", "-", display_name.casefold()).strip("-")[:64]


class NewDisciplineDialog(QDialog):
    """Name, display name, colour and icon of a new discipline (the rest is edited in the pane)."""

    def __init__(self, taken: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("New discipline")
        self.setMinimumWidth(DIALOG_WIDTH)
        self.taken = set(taken)
        self.display_name = QLineEdit()
        self.display_name.setPlaceholderText("Data science")
        self.name = QLineEdit()
        self.name.setPlaceholderText("data-science")
        self.color = ColorField()
        self.color.set_text(DEFAULT_COLOR)
        self.icon = QLineEdit(DEFAULT_ICON)
        self.problem = label(name="muted", wrap=True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.create_button: QPushButton = buttons.addButton("Create", QDialogButtonBox.ButtonRole.AcceptRole)
        self.create_button.setDefault(True)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self._named_by_hand = False
        self.display_name.textChanged.connect(self._suggest_name)
        self.name.textEdited.connect(lambda _text: setattr(self, "_named_by_hand", True))
        for signal in (self.name.textChanged, self.icon.textChanged, self.color.sig_changed):
            signal.connect(self._check)
        form = QFormLayout()
        form.addRow("Display name", self.display_name)
        form.addRow("Name", self.name)
        form.addRow("Colour", self.color)
        form.addRow("Icon", self.icon)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.problem)
        layout.addWidget(buttons)
        self._check()

    def _suggest_name(self, text: str) -> None:
        if not self._named_by_hand:
            self.name.setText(name_from(text))
        self._check()

    def _check(self, *_args: object) -> None:
        name = self.name.text().strip()
        problem = ""
        if name and not NAME_PATTERN.match(name):
            problem = "The name takes lower-case letters, digits, - and _ (up to 64)."
        elif name in self.taken:
            problem = f"A discipline named {name} exists already."
        elif not COLOR_PATTERN.match(self.color.text()):
            problem = "The colour is a hex colour like #3b82f6."
        self.problem.setText(problem)
        ready = name and self.display_name.text().strip() and self.icon.text().strip()
        self.create_button.setEnabled(bool(ready and not problem))

    def values(self) -> dict[str, Any]:
        """The fields as `disciplines.create` takes them."""
        return {
            "name": self.name.text().strip(),
            "display_name": self.display_name.text().strip(),
            "color": self.color.text(),
            "icon": self.icon.text().strip(),
        }
