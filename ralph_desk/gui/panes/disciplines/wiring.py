"""The Disciplines pane's wiring: reads disciplines, saves fields, servers and the disabled tools."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from PySide6.QtCore import QObject

from ralph_desk.domain.records import Change, Discipline
from ralph_desk.gui.actions import ActionRunner
from ralph_desk.gui.panes.disciplines.pane import DisciplinesPane
from ralph_desk.gui.panes.named_wiring import create_named, delete_named
from ralph_desk.services.container import Services


class DisciplinesWiring(QObject):
    """Connects the Disciplines pane to the disciplines service; re-reads when disciplines change."""

    topics = frozenset({"disciplines"})

    def __init__(
        self, pane: DisciplinesPane, services: Services, runner: ActionRunner, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.pane = pane
        self.services = services
        self.runner = runner
        pane.sig_selected.connect(self.show_detail)
        pane.sig_create_requested.connect(self.create)
        pane.sig_delete_requested.connect(self.delete)
        pane.sig_save_requested.connect(self.save)

    def refresh(self) -> None:
        """Read every discipline, then the selected one."""
        disciplines: list[Discipline] = self.runner.read(
            "read the disciplines", self.services.disciplines.list, []
        )
        self.pane.show_records(disciplines)
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
        discipline = self.runner.read(
            f"read discipline {name}", lambda: self.services.disciplines.get(name), None
        )
        self.pane.detail.show_discipline(discipline)

    def create(self, values: dict[str, Any]) -> None:
        """Create a discipline and select it."""
        create_named(self.runner, self.pane, values, self.services.disciplines.create, self.refresh)

    def delete(self, name: str) -> None:
        """Delete a discipline; the service refuses while tasks use it, and the window says why."""
        delete_named(self.runner, "discipline", name, self.services.disciplines.delete, self.refresh)

    def save(self, name: str, changes: dict[str, Any]) -> None:
        """Save the fields and servers, and the disabled tools through `set_disabled_tools`."""
        fields = dict(changes)
        tools = fields.pop("disabled_tools", None)

        def apply() -> Discipline:
            discipline = self.services.disciplines.update(name, **fields) if fields else None
            if tools is not None:
                discipline = self.services.disciplines.set_disabled_tools(name, tools)
            assert discipline is not None
            return discipline

        done = f"Saved discipline {name}; the next session gets the change."
        saved = self.runner.run(f"save discipline {name}", apply, done=done)
        if saved is not None:
            self.pane.detail.show_discipline(saved, force=True)
            self.pane.model.upsert([saved])
