"""The Features pane: the list of features, and the selected one's fields and learnings."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QStackedWidget, QTabWidget, QVBoxLayout, QWidget

from ralph_desk.domain.records import Feature
from ralph_desk.gui import fmt
from ralph_desk.gui.models.features import FeatureTableModel
from ralph_desk.gui.panes.features.dialogs import NewFeatureDialog
from ralph_desk.gui.panes.features.fields import FeatureFields
from ralph_desk.gui.panes.features.learnings import LearningsView
from ralph_desk.gui.panes.named_records import NamedPaneSpec, NamedRecordPane
from ralph_desk.gui.widgets.common import label
from ralph_desk.gui.widgets.empty_state import EmptyState

FIELDS, LEARNINGS = range(2)
LIST_WIDTH = 330


class FeatureDetail(QStackedWidget):
    """One feature in two tabs: its fields, and its learnings."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.feature: Feature | None = None
        self.empty = EmptyState(
            "features",
            "No feature selected",
            "Select a feature on the left to edit its description, architecture, context files and "
            "the learnings agents recorded about it.",
        )
        self.fields = FeatureFields()
        self.learnings = LearningsView()
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.fields, "Details")
        self.tabs.addTab(self.learnings, "Learnings")
        self.tabs.setTabToolTip(FIELDS, "What every session on the feature is told about it")
        self.tabs.setTabToolTip(LEARNINGS, "What agents found out about it: edit, delete, merge duplicates")
        self.heading = label(name="heading", wrap=True, selectable=True)
        self.subtitle = label(name="muted", wrap=True)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(12, 4, 4, 4)
        layout.setSpacing(4)
        layout.addWidget(self.heading)
        layout.addWidget(self.subtitle)
        layout.addWidget(self.tabs, 1)
        self.page = page
        self.addWidget(self.empty)
        self.addWidget(page)

    def show_feature(self, feature: Feature | None, others: list[str]) -> None:
        """Show a feature with its learnings (None: the empty state); edits in progress are kept."""
        self.feature = feature
        if feature is None:
            self.setCurrentWidget(self.empty)
            return
        self.setCurrentWidget(self.page)
        acronym = f"  ·  {feature.acronym}" if feature.acronym else ""
        self.heading.setText(f"{feature.display_name}{acronym}")
        self.subtitle.setText(fmt.one_line(feature.description, 200) or "No description yet.")
        self.fields.load(feature, others)
        self.learnings.show_learnings(list(feature.learnings))
        count = len(feature.learnings)
        self.tabs.setTabText(LEARNINGS, f"Learnings ({count})" if count else "Learnings")


FEATURES = NamedPaneSpec(
    noun="feature",
    heading="Features",
    new_label="New feature…",
    empty_text="A feature is a slice of the product that tasks belong to. Create one here, import a "
    "<code>prd.json</code> with <code>ralph-desk import-prd</code>, or let a braindump session "
    "propose them.",
    delete_question="Delete the feature {name} with its learnings? Only a feature no task uses can go.",
    new_dialog=NewFeatureDialog,
    sizes=(LIST_WIDTH, 900),
    fitted_columns=(1, 2),
    list_min_width=260,
)


class FeaturesPane(NamedRecordPane[Feature, FeatureDetail]):
    """Every feature in a list; the selected one in detail. Widgets only show and ask."""

    sig_update_learning_requested = Signal(int, str, object)
    """Replace a learning's text and reason (id, text, reason or None)."""
    sig_delete_learning_requested = Signal(int)
    """Delete the learning with this id."""
    sig_merge_learnings_requested = Signal(int, object)
    """Fold the learnings with these ids (a list) into the one with the first id."""

    def __init__(self, parent: QWidget | None = None) -> None:
        detail = FeatureDetail()
        super().__init__(FeatureTableModel(), detail, FEATURES, detail.fields, parent)
        detail = self.detail
        detail.fields.sig_save_requested.connect(self.sig_save_requested)
        detail.learnings.sig_update_requested.connect(self.sig_update_learning_requested)
        detail.learnings.sig_delete_requested.connect(self.sig_delete_learning_requested)
        detail.learnings.sig_merge_requested.connect(self.sig_merge_learnings_requested)
        QShortcut(QKeySequence.StandardKey.Save, self, detail.fields.request_save)

    def select_feature(self, name: str) -> bool:
        """Select a feature by name; whether it is listed."""
        return self.select_name(name)

    def refresh_style(self) -> None:
        """Redraw colours and icons after the palette changed."""
        super().refresh_style()
        self.detail.learnings.model.refresh_all()
