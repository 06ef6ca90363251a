"""The Disciplines pane: the list, and the selected discipline's fields, tool matrix and MCP servers."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QColor, QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QStackedWidget, QTabWidget, QVBoxLayout, QWidget

from ralph_desk.domain.records import Discipline
from ralph_desk.gui.backend import DISCIPLINE_FIELDS
from ralph_desk.gui.models.disciplines import DisciplineTableModel
from ralph_desk.gui.panes.disciplines.dialogs import NewDisciplineDialog
from ralph_desk.gui.panes.disciplines.fields import DisciplineFields
from ralph_desk.gui.panes.disciplines.matrix import ToolsEditor
from ralph_desk.gui.panes.disciplines.servers import ServersEditor
from ralph_desk.gui.panes.named_records import NamedPaneSpec, NamedRecordPane
from ralph_desk.gui.unsaved import CHANGED_ELSEWHERE, changed_elsewhere
from ralph_desk.gui.widgets.common import button, label
from ralph_desk.gui.widgets.empty_state import EmptyState
from ralph_desk.gui.widgets.pill import Pill

FIELDS, TOOLS, SERVERS = range(3)
EDITED = DISCIPLINE_FIELDS
"""The discipline's fields its tabs edit: every field the service updates."""
LIST_WIDTH = 180


class DisciplineDetail(QStackedWidget):
    """One discipline in three tabs with one Save for all of them."""

    sig_save_requested = Signal(str, object)
    """Save these changes (a dict; `disabled_tools` and `mcp_servers` included when edited)."""
    sig_dirty_changed = Signal(bool)
    """Whether any tab differs from the discipline as loaded."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.discipline: Discipline | None = None
        self._was_dirty = False
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
            if changed_elsewhere(self.discipline, discipline, EDITED):
                self.notice.setText(CHANGED_ELSEWHERE)
            self.discipline = discipline
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
        if dirty != self._was_dirty:
            self._was_dirty = dirty
            self.sig_dirty_changed.emit(dirty)
        self.save.setEnabled(dirty)
        self.revert.setEnabled(dirty)
        if dirty:
            self.notice.setText("Unsaved changes — saving applies them to the next session.")
        elif self.notice.text().startswith("Unsaved"):
            self.notice.setText("")


DISCIPLINES = NamedPaneSpec(
    noun="discipline",
    heading="Disciplines",
    new_label="New…",
    empty_text="A discipline is a kind of work (backend, docs, testing…) with its own persona and tools. "
    "Create one here, or let a braindump session propose them.",
    delete_question="Delete the discipline {name}? Only a discipline no task uses can go.",
    new_dialog=NewDisciplineDialog,
    sizes=(LIST_WIDTH, 940),
    fitted_columns=(1,),
)


class DisciplinesPane(NamedRecordPane[Discipline, DisciplineDetail]):
    """Every discipline in a list; the selected one in detail. Widgets only show and ask."""

    def __init__(self, parent: QWidget | None = None) -> None:
        detail = DisciplineDetail()
        super().__init__(DisciplineTableModel(), detail, DISCIPLINES, detail, parent)
        self.detail.sig_save_requested.connect(self.sig_save_requested)
        QShortcut(QKeySequence.StandardKey.Save, self, self.detail.request_save)

    def select_discipline(self, name: str) -> bool:
        """Select a discipline by name; whether it is listed."""
        return self.select_name(name)

    def refresh_style(self) -> None:
        """Redraw colours and icons after the palette changed."""
        super().refresh_style()
        self.detail.tools.effective.update_text()
