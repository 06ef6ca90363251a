"""The Features pane: the list of features, and the selected one's fields and learnings."""

from __future__ import annotations

from PySide6.QtCore import QItemSelection, QItemSelectionModel, Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QSplitter,
    QStackedWidget,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from ralph_desk.domain.records import Feature
from ralph_desk.gui import fmt
from ralph_desk.gui.dialogs.confirm import ConfirmBox, confirm
from ralph_desk.gui.models.base import KEY_ROLE
from ralph_desk.gui.models.features import FeatureTableModel
from ralph_desk.gui.panes.features.dialogs import NewFeatureDialog
from ralph_desk.gui.panes.features.fields import FeatureFields
from ralph_desk.gui.panes.features.learnings import LearningsView
from ralph_desk.gui.widgets.common import button, label
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


class FeaturesPane(QWidget):
    """Every feature in a list; the selected one in detail. Widgets only show and ask."""

    sig_feature_selected = Signal(str)
    """The person selected the feature with this name (empty: none)."""
    sig_create_requested = Signal(object)
    """Create a feature with these fields (a dict: name, display_name, description)."""
    sig_delete_requested = Signal(str)
    """Delete the feature with this name."""
    sig_save_requested = Signal(str, object)
    """Save these field changes (a dict) to the feature with this name."""
    sig_update_learning_requested = Signal(int, str, object)
    """Replace a learning's text and reason (id, text, reason or None)."""
    sig_delete_learning_requested = Signal(int)
    """Delete the learning with this id."""
    sig_merge_learnings_requested = Signal(int, object)
    """Fold the learnings with these ids (a list) into the one with the first id."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = FeatureTableModel(self)
        self.table = self._build_table()
        self.detail = FeatureDetail()
        self.new_dialog: NewFeatureDialog | None = None
        self.confirm_box: ConfirmBox | None = None
        self.new_button = button("New feature…", "add", "Create a feature")
        self.delete_button = button(
            "Delete", "trash", "Delete the selected feature (only when no task uses it)"
        )
        self.new_button.clicked.connect(self.ask_new)
        self.delete_button.clicked.connect(self.ask_delete)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self._list_area())
        self.splitter.addWidget(self.detail)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setSizes([LIST_WIDTH, 900])
        self.empty = EmptyState(
            "features",
            "No features yet",
            "A feature is a slice of the product that tasks belong to. Create one here, import a "
            "<code>prd.json</code> with <code>ralph-desk import-prd</code>, or let a braindump session "
            "propose them.",
            action="New feature…",
        )
        self.empty.sig_action_requested.connect(self.ask_new)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.splitter)
        self.stack.addWidget(self.empty)
        self.heading = label("Features", name="heading")
        self.count = label(name="muted")
        top = QHBoxLayout()
        top.addWidget(self.heading)
        top.addStretch(1)
        top.addWidget(self.count)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(20, 16, 20, 12)
        layout.setSpacing(10)
        layout.addLayout(top)
        layout.addWidget(self.stack, 1)
        self._connect()
        QShortcut(QKeySequence.StandardKey.Save, self, self.detail.fields.request_save)
        self._update()

    def _connect(self) -> None:
        detail = self.detail
        detail.fields.sig_save_requested.connect(self.sig_save_requested)
        detail.learnings.sig_update_requested.connect(self.sig_update_learning_requested)
        detail.learnings.sig_delete_requested.connect(self.sig_delete_learning_requested)
        detail.learnings.sig_merge_requested.connect(self.sig_merge_learnings_requested)

    def _build_table(self) -> QTableView:
        table = QTableView()
        table.setModel(self.model)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        table.verticalHeader().hide()
        table.setShowGrid(False)
        table.setAlternatingRowColors(True)
        table.setWordWrap(False)
        table.setSortingEnabled(True)
        table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        header = table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        header.setHighlightSections(False)
        header.setSortIndicator(0, Qt.SortOrder.AscendingOrder)
        table.selectionModel().selectionChanged.connect(self._on_selection)
        return table

    def _list_area(self) -> QWidget:
        area = QWidget()
        buttons = QHBoxLayout()
        buttons.addWidget(self.new_button)
        buttons.addStretch(1)
        buttons.addWidget(self.delete_button)
        layout = QVBoxLayout(area)
        layout.setContentsMargins(0, 0, 6, 0)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)
        area.setMinimumWidth(260)
        return area

    # --- content ------------------------------------------------------------------------------

    def show_features(self, features: list[Feature]) -> None:
        """Show exactly these features (the selection stays on a feature that is still there)."""
        self.model.set_items(features)
        if self.selected_name() is None and features:
            self.table.selectRow(0)
        self._update()

    def names(self) -> list[str]:
        """The names of the features shown."""
        return [feature.name for feature in self.model.items]

    def selected_name(self) -> str | None:
        """The name of the selected feature, if any."""
        rows = self.table.selectionModel().selectedRows()
        return str(rows[0].data(KEY_ROLE)) if rows else None

    def select_feature(self, name: str) -> bool:
        """Select a feature by name; whether it is listed."""
        row = self.model.row_of(name)
        if row is None:
            return False
        flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        self.table.selectionModel().setCurrentIndex(self.model.index(row, 0), flags)
        self.table.scrollTo(self.model.index(row, 0))
        return True

    # --- requests -----------------------------------------------------------------------------

    def ask_new(self) -> None:
        """Open the new-feature dialog."""
        dialog = NewFeatureDialog(self.names(), self)
        dialog.accepted.connect(lambda: self.sig_create_requested.emit(dialog.values()))
        self.new_dialog = dialog
        dialog.open()

    def ask_delete(self) -> None:
        """Ask, then delete the selected feature."""
        name = self.selected_name()
        if name is None:
            return
        self.confirm_box = confirm(
            self,
            "Delete a feature",
            f"Delete the feature {name} with its learnings? Only a feature no task uses can go.",
            "Delete",
            lambda: self.sig_delete_requested.emit(name),
        )

    def _on_selection(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        self.delete_button.setEnabled(self.selected_name() is not None)
        self.sig_feature_selected.emit(self.selected_name() or "")

    def _update(self) -> None:
        total = self.model.rowCount()
        self.stack.setCurrentWidget(self.splitter if total else self.empty)
        self.count.setText(fmt.plural(total, "feature"))
        self.delete_button.setEnabled(self.selected_name() is not None)

    def refresh_style(self) -> None:
        """Redraw colours and icons after the palette changed."""
        self.model.refresh_all()
        self.detail.learnings.model.refresh_all()
        self.empty.refresh_style()
