"""The editable fields of one feature, and which of them the person changed."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from ralph_desk.domain.records import Feature
from ralph_desk.gui import fmt
from ralph_desk.gui.panes.features.lists import CheckList, PathListEditor
from ralph_desk.gui.unsaved import CHANGED_ELSEWHERE, changed_elsewhere
from ralph_desk.gui.widgets.common import button, label
from ralph_desk.gui.widgets.form import EditForm, cleaned, editor_form, field_pair, text_box
from ralph_desk.gui.widgets.layout import scroller

EDITED = (
    "display_name",
    "acronym",
    "description",
    "architecture",
    "boundaries",
    "context_files",
    "knowledge_paths",
    "dependencies",
)
"""The feature's fields this form edits (a learning the loop records is no conflict)."""
ACRONYM_LIMIT = 16
TEXT_HEIGHTS = {"description": 84, "architecture": 84, "boundaries": 62}


class FeatureFields(EditForm):
    """Every editable field of a feature; Save sends only what changed."""

    sig_save_requested = Signal(str, object)
    """Save these changes (a dict of field → value, as `features.update` takes them) to the feature."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.feature: Feature | None = None
        self.display_name = QLineEdit()
        self.acronym = QLineEdit()
        self.acronym.setMaxLength(ACRONYM_LIMIT)
        self.acronym.setPlaceholderText("e.g. TD")
        self.acronym.setMaximumWidth(120)
        self.description = text_box(
            TEXT_HEIGHTS["description"], "What the feature is for, in a few sentences"
        )
        self.architecture = text_box(
            TEXT_HEIGHTS["architecture"], "How it is built: modules, data flow, choices"
        )
        self.boundaries = text_box(TEXT_HEIGHTS["boundaries"], "What it must not touch or depend on")
        self.knowledge = PathListEditor("docs/primer.md — documents to know about")
        self.context = PathListEditor("src/module.py — files every session on it reads")
        self.dependencies = CheckList()
        self.dependencies.setToolTip("Features this one builds on; their summaries reach its sessions")
        self.facts = label(name="muted", wrap=True, selectable=True)
        self.notice = label(name="muted", wrap=True)
        self.save = button("Save", "save", "Save the changed fields (Ctrl+S)", primary=True)
        self.revert = button("Revert", "refresh", "Throw away your edits and show the feature as stored")
        self.save.clicked.connect(self.request_save)
        self.revert.clicked.connect(self.revert_edits)
        self._layout_form()
        for signal in (
            self.display_name.textChanged,
            self.acronym.textChanged,
            self.description.textChanged,
            self.architecture.textChanged,
            self.boundaries.textChanged,
            self.knowledge.sig_changed,
            self.context.sig_changed,
            self.dependencies.sig_changed,
        ):
            signal.connect(self._on_edit)
        self._update_buttons()

    def _layout_form(self) -> None:
        form = editor_form()
        form.addRow("Display name", field_pair(self.display_name, "Acronym", self.acronym))
        form.addRow("Description", self.description)
        form.addRow("Architecture", self.architecture)
        form.addRow("Boundaries", self.boundaries)
        form.addRow("Context files", self.context)
        form.addRow("Knowledge paths", self.knowledge)
        form.addRow("Depends on", self.dependencies)
        body = QWidget()
        body_layout = QVBoxLayout(body)
        body_layout.setContentsMargins(12, 12, 12, 4)
        body_layout.addLayout(form)
        body_layout.addWidget(self.facts)
        body_layout.addStretch(1)
        area = scroller(body)
        actions = QHBoxLayout()
        actions.setContentsMargins(12, 4, 12, 4)
        actions.addWidget(self.notice, 1)
        actions.addWidget(self.revert)
        actions.addWidget(self.save)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(area, 1)
        layout.addLayout(actions)

    def load(self, feature: Feature, others: list[str], force: bool = False) -> None:
        """Show `feature` (it may depend on `others`); edits on the same one stay unless `force`."""
        same = self.feature is not None and self.feature.name == feature.name
        if same and self._dirty and not force:
            if changed_elsewhere(self.feature, feature, EDITED):
                self.notice.setText(CHANGED_ELSEWHERE)
            self.feature = feature
            return
        self.feature = feature
        self._loading = True
        self.display_name.setText(feature.display_name)
        self.display_name.setCursorPosition(0)
        self.acronym.setText(feature.acronym or "")
        self.description.setPlainText(feature.description or "")
        self.architecture.setPlainText(feature.architecture or "")
        self.boundaries.setPlainText(feature.boundaries or "")
        self.context.set_values(feature.context_files)
        self.knowledge.set_values(feature.knowledge_paths)
        choices = [name for name in others if name != feature.name]
        self.dependencies.set_items(choices, feature.dependencies)
        self._loading = False
        self.notice.setText("")
        self.facts.setText(f"name {feature.name} · created {fmt.when(feature.created_at)}")
        self._set_dirty(False)

    def changes(self) -> dict[str, Any]:
        """The fields that differ from the feature as loaded, as `features.update` takes them."""
        feature = self.feature
        if feature is None:
            return {}
        current: dict[str, Any] = {
            "display_name": self.display_name.text().strip(),
            "acronym": cleaned(self.acronym.text()),
            "description": cleaned(self.description.toPlainText()),
            "architecture": cleaned(self.architecture.toPlainText()),
            "boundaries": cleaned(self.boundaries.toPlainText()),
            "context_files": self.context.values(),
            "knowledge_paths": self.knowledge.values(),
            "dependencies": self.dependencies.checked(),
        }
        stored: dict[str, Any] = {
            "display_name": feature.display_name,
            "acronym": feature.acronym,
            "description": feature.description,
            "architecture": feature.architecture,
            "boundaries": feature.boundaries,
            "context_files": list(feature.context_files),
            "knowledge_paths": list(feature.knowledge_paths),
            "dependencies": list(feature.dependencies),
        }
        return {key: value for key, value in current.items() if value != stored[key]}

    def request_save(self) -> None:
        """Ask to save what changed."""
        changes = self.changes()
        if self.feature is not None and changes:
            self.sig_save_requested.emit(self.feature.name, changes)

    def revert_edits(self) -> None:
        """Show the feature as loaded again."""
        if self.feature is not None:
            others = [self.dependencies.item(row).text() for row in range(self.dependencies.count())]
            self.load(self.feature, others, force=True)

    def _update_buttons(self) -> None:
        self.save.setEnabled(self._dirty and bool(self.display_name.text().strip()))
        self.revert.setEnabled(self._dirty)
