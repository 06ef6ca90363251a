"""The Disciplines pane: the list, and the selected discipline's fields, tool matrix and MCP servers."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QItemSelection, QItemSelectionModel, Qt, Signal
from PySide6.QtGui import QColor, QKeySequence, QShortcut
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

from ralph_desk.domain.records import Discipline
from ralph_desk.gui import fmt
from ralph_desk.gui.dialogs.confirm import ConfirmBox, confirm
from ralph_desk.gui.models.base import KEY_ROLE
from ralph_desk.gui.models.disciplines import DisciplineTableModel
from ralph_desk.gui.panes.disciplines.dialogs import NewDisciplineDialog
from ralph_desk.gui.panes.disciplines.fields import DisciplineFields
from ralph_desk.gui.panes.disciplines.matrix import ToolsEditor
from ralph_desk.gui.panes.disciplines.servers import ServersEditor
from ralph_desk.gui.widgets.common import button, label
from ralph_desk.gui.widgets.empty_state import EmptyState
from ralph_desk.gui.widgets.pill import Pill

FIELDS, TOOLS, SERVERS = range(3)
LIST_WIDTH = 180


class DisciplineDetail(QStackedWidget):
    """One discipline in three tabs with one Save for all of them."""

    sig_save_requested = Signal(str, object)
    """Save these changes (a dict; `disabled_tools` and `mcp_servers` included when edited)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.discipline: Discipline | None = None
        self.empty = EmptyState(
            "disciplines",
            "No discipline selected",
            "Select a discipline on the left to edit its persona, the tools its agents may use in each "
            "recipe, and the extra MCP servers they get.",
        )
        self.fields = DisciplineFields()
        self.tools = ToolsEditor()
        self.servers = ServersEditor()
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(self.fields, "Details")
        self.tabs.addTab(self.tools, "Tools")
        self.tabs.addTab(self.servers, "MCP servers")
        self.tabs.setTabToolTip(FIELDS, "Persona, skills and conventions the agents are given")
        self.tabs.setTabToolTip(TOOLS, "The recipe × tool matrix: which tools this discipline's sessions get")
        self.tabs.setTabToolTip(SERVERS, "Extra MCP servers handed to this discipline's sessions")
        self.heading = label(name="heading", wrap=True, selectable=True)
        self.acronym = Pill()
        self.name = label(name="muted", selectable=True)
        self.notice = label(name="muted", wrap=True)
        self.save = button(
            "Save", "save", "Save every tab's changes (Ctrl+S); they apply to the next session", primary=True
        )
        self.revert = button("Revert", "refresh", "Throw away your edits and show the discipline as stored")
        self.save.clicked.connect(self.request_save)
        self.revert.clicked.connect(self.revert_edits)
        top = QHBoxLayout()
        top.addWidget(self.heading)
        top.addWidget(self.acronym)
        top.addWidget(self.name)
        top.addStretch(1)
        actions = QHBoxLayout()
        actions.addWidget(self.notice, 1)
        actions.addWidget(self.revert)
        actions.addWidget(self.save)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(12, 4, 4, 4)
        layout.setSpacing(6)
        layout.addLayout(top)
        layout.addWidget(self.tabs, 1)
        layout.addLayout(actions)
        self.page = page
        self.addWidget(self.empty)
        self.addWidget(page)
        self.fields.sig_edited.connect(self._update_buttons)
        self.servers.sig_edited.connect(self._update_buttons)
        self.tools.model.sig_disabled_changed.connect(self._update_buttons)
        self._update_buttons()

    @property
    def dirty(self) -> bool:
        """Whether any tab differs from the discipline as loaded."""
        return bool(self.changes())

    def show_discipline(self, discipline: Discipline | None, force: bool = False) -> None:
        """Show a discipline (None: the empty state); edits on the same one stay unless `force`."""
        same = (
            self.discipline is not None and discipline is not None and self.discipline.name == discipline.name
        )
        if same and self.dirty and not force:
            self.discipline = discipline
            self.notice.setText("Changed elsewhere while you edit: Save overwrites it, Revert shows it.")
            return
        self.discipline = discipline
        if discipline is None:
            self.setCurrentWidget(self.empty)
            return
        self.setCurrentWidget(self.page)
        self.heading.setText(discipline.display_name)
        self.acronym.set_pill(discipline.acronym or discipline.name, QColor(discipline.color))
        self.name.setText(f"name: {discipline.name}")
        self.fields.load(discipline)
        self.tools.model.load(discipline.disabled_tools)
        self.servers.load(list(discipline.mcp_servers))
        count = len(discipline.mcp_servers)
        self.tabs.setTabText(SERVERS, f"MCP servers ({count})" if count else "MCP servers")
        self.notice.setText("")
        self._update_buttons()

    def changes(self) -> dict[str, Any]:
        """What differs from the stored discipline, as `disciplines.update` takes it."""
        if self.discipline is None:
            return {}
        changes = self.fields.changes()
        if self.tools.model.dirty:
            changes["disabled_tools"] = self.tools.model.disabled_list()
        if self.servers.dirty:
            changes["mcp_servers"] = self.servers.values()
        return changes

    def request_save(self) -> None:
        """Ask to save every tab's changes."""
        changes = self.changes()
        if self.discipline is not None and changes:
            self.sig_save_requested.emit(self.discipline.name, changes)

    def revert_edits(self) -> None:
        """Show the discipline as stored again."""
        if self.discipline is not None:
            self.show_discipline(self.discipline, force=True)

    def _update_buttons(self) -> None:
        dirty = self.dirty
        self.save.setEnabled(dirty)
        self.revert.setEnabled(dirty)
        if dirty:
            self.notice.setText("Unsaved changes — saving applies them to the next session.")
        elif self.notice.text().startswith("Unsaved"):
            self.notice.setText("")


class DisciplinesPane(QWidget):
    """Every discipline in a list; the selected one in detail. Widgets only show and ask."""

    sig_discipline_selected = Signal(str)
    """The person selected the discipline with this name (empty: none)."""
    sig_create_requested = Signal(object)
    """Create a discipline with these fields (a dict: name, display_name, color, icon)."""
    sig_delete_requested = Signal(str)
    """Delete the discipline with this name."""
    sig_save_requested = Signal(str, object)
    """Save these changes (a dict) to the discipline with this name."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = DisciplineTableModel(self)
        self.table = self._build_table()
        self.detail = DisciplineDetail()
        self.detail.sig_save_requested.connect(self.sig_save_requested)
        self.new_dialog: NewDisciplineDialog | None = None
        self.confirm_box: ConfirmBox | None = None
        self.new_button = button("New…", "add", "Create a discipline")
        self.delete_button = button(
            "Delete", "trash", "Delete the selected discipline (only when no task uses it)"
        )
        self.new_button.clicked.connect(self.ask_new)
        self.delete_button.clicked.connect(self.ask_delete)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self._list_area())
        self.splitter.addWidget(self.detail)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setSizes([LIST_WIDTH, 940])
        self.empty = EmptyState(
            "disciplines",
            "No disciplines yet",
            "A discipline is a kind of work (backend, docs, testing…) with its own persona and tools. "
            "Create one here, or let a braindump session propose them.",
            action="New discipline…",
        )
        self.empty.sig_action_requested.connect(self.ask_new)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.splitter)
        self.stack.addWidget(self.empty)
        self.heading = label("Disciplines", name="heading")
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
        QShortcut(QKeySequence.StandardKey.Save, self, self.detail.request_save)
        self._update()

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
        return area

    # --- content ------------------------------------------------------------------------------

    def show_disciplines(self, disciplines: list[Discipline]) -> None:
        """Show exactly these disciplines (the selection stays on one that is still there)."""
        self.model.set_items(disciplines)
        if self.selected_name() is None and disciplines:
            self.table.selectRow(0)
        self._update()

    def names(self) -> list[str]:
        """The names of the disciplines shown."""
        return [discipline.name for discipline in self.model.items]

    def selected_name(self) -> str | None:
        """The name of the selected discipline, if any."""
        rows = self.table.selectionModel().selectedRows()
        return str(rows[0].data(KEY_ROLE)) if rows else None

    def select_discipline(self, name: str) -> bool:
        """Select a discipline by name; whether it is listed."""
        row = self.model.row_of(name)
        if row is None:
            return False
        flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        self.table.selectionModel().setCurrentIndex(self.model.index(row, 0), flags)
        return True

    # --- requests -----------------------------------------------------------------------------

    def ask_new(self) -> None:
        """Open the new-discipline dialog."""
        dialog = NewDisciplineDialog(self.names(), self)
        dialog.accepted.connect(lambda: self.sig_create_requested.emit(dialog.values()))
        self.new_dialog = dialog
        dialog.open()

    def ask_delete(self) -> None:
        """Ask, then delete the selected discipline."""
        name = self.selected_name()
        if name is None:
            return
        self.confirm_box = confirm(
            self,
            "Delete a discipline",
            f"Delete the discipline {name}? Only a discipline no task uses can go.",
            "Delete",
            lambda: self.sig_delete_requested.emit(name),
        )

    def _on_selection(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        self.delete_button.setEnabled(self.selected_name() is not None)
        self.sig_discipline_selected.emit(self.selected_name() or "")

    def _update(self) -> None:
        total = self.model.rowCount()
        self.stack.setCurrentWidget(self.splitter if total else self.empty)
        self.count.setText(fmt.plural(total, "discipline"))
        self.delete_button.setEnabled(self.selected_name() is not None)

    def refresh_style(self) -> None:
        """Redraw colours after the palette changed."""
        self.detail.tools.effective.update_text()
        self.model.refresh_all()
