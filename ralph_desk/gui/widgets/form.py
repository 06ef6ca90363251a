"""Building blocks of the record editors' forms: the edit form, text boxes, rows of two fields, line lists."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QPlainTextEdit, QWidget

from ralph_desk.gui.widgets.common import label


class EditForm(QWidget):
    """A form editing one loaded record: dirty while its fields differ from the record as loaded."""

    sig_dirty_changed = Signal(bool)
    """Whether the fields differ from the record as loaded."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._dirty = False
        self._loading = False  # while the fields are filled from a record, edits are not the person's

    @property
    def dirty(self) -> bool:
        """Whether the person changed a field since the record was loaded."""
        return self._dirty

    def changes(self) -> dict[str, Any]:
        """The fields that differ from the record as loaded."""
        raise NotImplementedError

    def _update_buttons(self) -> None:
        """Enable Save and Revert as the form's state allows."""
        raise NotImplementedError

    def _on_edit(self, *_args: object) -> None:
        if not self._loading:
            self._set_dirty(bool(self.changes()))

    def _set_dirty(self, dirty: bool) -> None:
        changed = dirty != self._dirty
        self._dirty = dirty
        self._update_buttons()
        if changed:
            self.sig_dirty_changed.emit(dirty)


def text_box(height: int, placeholder: str = "") -> QPlainTextEdit:
    """A fixed-height plain text box where Tab moves focus."""
    box = QPlainTextEdit()
    box.setTabChangesFocus(True)
    box.setFixedHeight(height)
    box.setPlaceholderText(placeholder)
    return box


def editor_form() -> QFormLayout:
    """A form spaced as the record editors space theirs."""
    form = QFormLayout()
    form.setHorizontalSpacing(14)
    form.setVerticalSpacing(8)
    return form


def field_pair(
    first: QWidget, caption: str, second: QWidget, stretch: tuple[int, int] = (1, 0)
) -> QHBoxLayout:
    """Two fields on one form row, the second with its own caption."""
    row = QHBoxLayout()
    row.setSpacing(10)
    row.addWidget(first, stretch[0])
    row.addWidget(label(caption))
    row.addWidget(second, stretch[1])
    return row


def lines(text: str) -> list[str]:
    """The non-blank lines of a text, stripped."""
    return [line.strip() for line in text.splitlines() if line.strip()]


def cleaned(text: str) -> str | None:
    """The text stripped, or None when that leaves nothing."""
    return text.strip() or None
