"""What the Features and Disciplines wirings do alike: create a named record and select it, delete one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ralph_desk.gui.actions import ActionRunner
from ralph_desk.gui.models.named import Named
from ralph_desk.gui.panes.named_records import NamedRecordPane


def create_named(
    runner: ActionRunner,
    pane: NamedRecordPane[Any, Any],
    values: dict[str, Any],
    create: Callable[..., Named],
    refresh: Callable[[], None],
) -> None:
    """Create a record from the new-record dialog's values, re-read the list and select the record."""
    noun = pane.spec.noun
    name = str(values.get("name", ""))
    created = runner.run(f"create {noun} {name}", lambda: create(**values), done=f"Created {noun} {name}.")
    if created is not None:
        refresh()
        pane.select_name(created.name)


def delete_named(
    runner: ActionRunner, noun: str, name: str, delete: Callable[[str], object], refresh: Callable[[], None]
) -> None:
    """Delete a record, then re-read; the service refuses while tasks use it, and the window says why."""

    def call() -> bool:
        delete(name)
        return True

    if runner.run(f"delete {noun} {name}", call, done=f"Deleted {noun} {name}."):
        refresh()
