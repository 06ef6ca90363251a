"""The new-discipline dialog: the fields a discipline cannot do without."""

from __future__ import annotations

import re
from typing import Any

from PySide6.QtWidgets import QLineEdit, QWidget

from ralph_desk.gui.dialogs.new_record import NewRecordDialog
from ralph_desk.gui.panes.disciplines.fields import ColorField

DIALOG_WIDTH = 480
COLOR_PATTERN = re.compile(r"^#[0-9a-f]{6}$")
DEFAULT_COLOR = "#64748b"
DEFAULT_ICON = "code"


class NewDisciplineDialog(NewRecordDialog):
    """Name, display name, colour and icon of a new discipline (the rest is edited in the pane)."""

    def __init__(self, taken: list[str], parent: QWidget | None = None) -> None:
        super().__init__("discipline", "Data science", taken, DIALOG_WIDTH, parent)
        self.color = ColorField()
        self.color.set_text(DEFAULT_COLOR)
        self.icon = QLineEdit(DEFAULT_ICON)
        self.add_fields(
            [("Colour", self.color), ("Icon", self.icon)], [self.icon.textChanged, self.color.sig_changed]
        )

    def extra_problem(self) -> str:
        """A colour that is not `#rrggbb`."""
        return "" if COLOR_PATTERN.match(self.color.text()) else "The colour is a hex colour like #3b82f6."

    def extra_ready(self) -> bool:
        """Whether an icon is named."""
        return bool(self.icon.text().strip())

    def values(self) -> dict[str, Any]:
        """The fields as `disciplines.create` takes them."""
        return {**super().values(), "color": self.color.text(), "icon": self.icon.text().strip()}
