"""What the Features and Disciplines wirings do alike: create a named record and select it, delete one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ralph_desk.gui.models.named import Named
from ralph_desk.gui.panes.named_records import NamedRecordPane
from ralph_desk.gui.worker import Worker

Refresh = Callable[[str], None]
"""Re-read the list, then select the record with this name (empty: keep the selection)."""


def create_named(
    worker: Worker,
    pane: NamedRecordPane[Any, Any],
    values: dict[str, Any],
    create: Callable[..., Named],
    refresh: Refresh,
) -> None:
    """Create a record from the new-record dialog's values, re-read the list and select the record."""
    noun = pane.spec.noun
    name = str(values.get("name", ""))
    worker.submit(
        f"create {noun} {name}",
        lambda: create(**values),
        lambda created: refresh(created.name),
        done=f"Created {noun} {name}.",
        keep=True,
        busy=True,
    )


def delete_named(
    worker: Worker, noun: str, name: str, delete: Callable[[str], object], refresh: Refresh
) -> None:
    """Delete a record, then re-read; the service refuses while tasks use it, and the window says why."""
    worker.submit(
        f"delete {noun} {name}",
        lambda: delete(name),
        lambda _deleted: refresh(""),
        done=f"Deleted {noun} {name}.",
        keep=True,
        busy=True,
    )
