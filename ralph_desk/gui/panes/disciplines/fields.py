"""The editable fields of one discipline: names, icon, colour, persona, skills and conventions."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QColorDialog,
    QHBoxLayout,
    QLineEdit,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ralph_desk.domain.records import Discipline
from ralph_desk.gui import fmt, theme
from ralph_desk.gui.widgets.common import label
from ralph_desk.gui.widgets.form import editor_form, field_pair, lines, text_box

ACRONYM_LIMIT = 10
SWATCH = 22


class ColorField(QWidget):
    """A colour as a swatch that opens a colour picker, and its `#rrggbb` text."""

    sig_changed = Signal()
    """The colour changed."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.swatch = QToolButton()
        self.swatch.setFixedSize(SWATCH + 10, SWATCH + 4)
        self.swatch.setToolTip("Choose a colour")
        self.swatch.clicked.connect(self.choose)
        self.hex = QLineEdit()
        self.hex.setPlaceholderText("#3b82f6")
        self.hex.setMaxLength(7)
        self.hex.setFixedWidth(90)
        self.hex.textChanged.connect(self._on_text)
        self.dialog: QColorDialog | None = None
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addWidget(self.swatch)
        layout.addWidget(self.hex)
        layout.addStretch(1)

    def text(self) -> str:
        """The colour as typed (lower case)."""
        return self.hex.text().strip().lower()

    def set_text(self, value: str) -> None:
        """Show a colour."""
        self.hex.setText(value)
        self._paint()

    def choose(self) -> None:
        """Open the colour picker on the current colour."""
        dialog = QColorDialog(QColor(self.text()) if QColor.isValidColorName(self.text()) else QColor(), self)
        dialog.setWindowTitle("Discipline colour")
        dialog.colorSelected.connect(lambda color: self.set_text(color.name()))
        self.dialog = dialog
        dialog.open()

    def _on_text(self, _text: str) -> None:
        self._paint()
        self.sig_changed.emit()

    def _paint(self) -> None:
        value = self.text()
        valid = len(value) == 7 and QColor.isValidColorName(value)
        fill = value if valid else "transparent"
        border = theme.tones().border
        self.swatch.setStyleSheet(
            f"QToolButton {{ background: {fill}; border: 1px solid {border}; border-radius: 4px; }}"
        )


class DisciplineFields(QScrollArea):
    """The discipline's own fields; `changes()` gives what differs from the loaded discipline."""

    sig_edited = Signal()
    """A field was edited."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setFrameShape(QScrollArea.Shape.NoFrame)
        self.discipline: Discipline | None = None
        self._loading = False
        self.display_name = QLineEdit()
        self.acronym = QLineEdit()
        self.acronym.setMaxLength(ACRONYM_LIMIT)
        self.acronym.setPlaceholderText("e.g. FE")
        self.acronym.setMaximumWidth(110)
        self.icon = QLineEdit()
        self.icon.setPlaceholderText("code, book-open, server…")
        self.icon.setToolTip("An icon name (letters, digits, - _ .) that clients may show")
        self.color = ColorField()
        self.system_prompt = text_box(
            130, "Who the agent is for this kind of work: its persona and priorities"
        )
        self.skills = text_box(80, "One skill per line: Python, FastAPI…")
        self.conventions = text_box(100, "How work is done here: style, tests, commit rules")
        self.facts = label(name="muted", wrap=True, selectable=True)
        self.setWidget(self._layout_form())
        for signal in (
            self.display_name.textChanged,
            self.acronym.textChanged,
            self.icon.textChanged,
            self.color.sig_changed,
            self.system_prompt.textChanged,
            self.skills.textChanged,
            self.conventions.textChanged,
        ):
            signal.connect(self._on_edit)

    def _layout_form(self) -> QWidget:
        form = editor_form()
        form.addRow("Display name", field_pair(self.display_name, "Acronym", self.acronym))
        form.addRow("Colour", field_pair(self.color, "Icon", self.icon, stretch=(0, 1)))
        form.addRow("System prompt", self.system_prompt)
        form.addRow("Skills", self.skills)
        form.addRow("Conventions", self.conventions)
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(12, 12, 12, 12)
        layout.addLayout(form)
        layout.addWidget(self.facts)
        layout.addStretch(1)
        return body

    def load(self, discipline: Discipline) -> None:
        """Show a discipline's stored fields."""
        self.discipline = discipline
        self._loading = True
        self.display_name.setText(discipline.display_name)
        self.display_name.setCursorPosition(0)
        self.acronym.setText(discipline.acronym or "")
        self.icon.setText(discipline.icon)
        self.color.set_text(discipline.color)
        self.system_prompt.setPlainText(discipline.system_prompt or "")
        self.skills.setPlainText("\n".join(discipline.skills))
        self.conventions.setPlainText(discipline.conventions or "")
        self._loading = False
        self.facts.setText(f"name {discipline.name} · created {fmt.when(discipline.created_at)}")

    def changes(self) -> dict[str, Any]:
        """The fields that differ from the discipline as loaded, as `disciplines.update` takes them."""
        stored = self.discipline
        if stored is None:
            return {}
        current: dict[str, Any] = {
            "display_name": self.display_name.text().strip(),
            "acronym": self.acronym.text().strip() or None,
            "icon": self.icon.text().strip(),
            "color": self.color.text(),
            "system_prompt": self.system_prompt.toPlainText().strip() or None,
            "skills": lines(self.skills.toPlainText()),
            "conventions": self.conventions.toPlainText().strip() or None,
        }
        before: dict[str, Any] = {
            "display_name": stored.display_name,
            "acronym": stored.acronym,
            "icon": stored.icon,
            "color": stored.color.lower(),
            "system_prompt": stored.system_prompt,
            "skills": list(stored.skills),
            "conventions": stored.conventions,
        }
        return {key: value for key, value in current.items() if value != before[key]}

    def _on_edit(self, *_args: object) -> None:
        if not self._loading:
            self.sig_edited.emit()
