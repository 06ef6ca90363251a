"""The Disciplines pane's wiring: reads disciplines, saves fields, servers and the disabled tools."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from PySide6.QtCore import QObject

from ralph_desk.domain.records import Change, Discipline
from ralph_desk.gui.backend import Services
from ralph_desk.gui.panes.disciplines.pane import DisciplinesPane
from ralph_desk.gui.panes.named_wiring import create_named, delete_named
from ralph_desk.gui.worker import Worker


class DisciplinesWiring(QObject):
    """Connects the Disciplines pane to the disciplines service; re-reads when disciplines change."""

    topics = frozenset({"disciplines"})

    def __init__(
        self, pane: DisciplinesPane, services: Services, worker: Worker, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.pane = pane
        self.disciplines = services.disciplines
        self.worker = worker
        pane.sig_selected.connect(self.show_detail)
        pane.sig_create_requested.connect(self.create)
        pane.sig_delete_requested.connect(self.delete)
        pane.sig_save_requested.connect(self.save)

    def refresh(self, select: str = "") -> None:
        """Read every discipline, then the selected one (or the one named `select`)."""
        self.worker.submit(
            "read the disciplines", self.disciplines.list, lambda found: self._show(found, select)
        )

    def _show(self, disciplines: list[Discipline], select: str) -> None:
        self.pane.show_records(disciplines)
        if select:
            self.pane.select_name(select)
        self.show_detail(self.pane.selected_name() or "")

    def on_changes(self, changes: Iterable[Change]) -> None:
        """Re-read when a discipline changed (edits in progress stay)."""
        if {change.topic for change in changes} & self.topics:
            self.refresh()

    def show_detail(self, name: str) -> None:
        """Show the discipline with this name (empty: none)."""
        if not name:
            self.pane.detail.show_discipline(None)
            return
        disciplines = self.disciplines
        self.worker.submit(
            f"read discipline {name}",
            lambda: disciplines.get(name),
            self.pane.detail.show_discipline,
            lambda: self.pane.detail.show_discipline(None),
        )

    def create(self, values: dict[str, Any]) -> None:
        """Create a discipline and select it."""
        create_named(self.worker, self.pane, values, self.disciplines.create, self.refresh)

    def delete(self, name: str) -> None:
        """Delete a discipline; the service refuses while tasks use it, and the window says why."""
        delete_named(self.worker, "discipline", name, self.disciplines.delete, self.refresh)

    def save(self, name: str, changes: dict[str, Any]) -> None:
        """Save the fields and servers, and the disabled tools through `set_disabled_tools`."""
        fields = dict(changes)
        tools = fields.pop("disabled_tools", None)
        disciplines = self.disciplines

        def apply() -> Discipline:
            discipline = disciplines.update(name, **fields) if fields else None
            if tools is not None:
                discipline = disciplines.set_disabled_tools(name, tools)
            assert discipline is not None
            return discipline

        self.worker.submit(
            f"save discipline {name}",
            apply,
            self._saved,
            done=f"Saved discipline {name}; the next session gets the change.",
            keep=True,
            busy=True,
        )

    def _saved(self, saved: Discipline) -> None:
        self.pane.detail.show_discipline(saved, force=True)
        self.pane.model.upsert([saved])
