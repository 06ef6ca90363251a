"""Records known by a name and shown under a display name: their model and shared columns."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from PySide6.QtCore import QObject
from PySide6.QtGui import QIcon

from ralph_desk.gui.models.base import Column, RecordTableModel

T = TypeVar("T")


class Named(Protocol):
    """A record with a unique name and a display name."""

    @property
    def name(self) -> str:
        """The unique name tasks and agents use."""
        ...

    @property
    def display_name(self) -> str:
        """The name people read."""
        ...


N = TypeVar("N", bound=Named)


def display_name_column(
    title: str, tooltip: Callable[[N], str | None], icon: Callable[[N], QIcon | None] | None = None
) -> Column[N]:
    """The display name, sorted without regard to case."""
    return Column(
        title,
        lambda record: record.display_name,
        sort_key=lambda record: record.display_name.casefold(),
        tooltip=tooltip,
        icon=icon,
    )


def count_column(
    title: str, values: Callable[[T], Sequence[str]], separator: str, header_tip: str
) -> Column[T]:
    """How many values a record has (blank for none), listed in the tooltip."""
    return Column(
        title,
        lambda record: str(len(values(record))) if values(record) else "",
        sort_key=lambda record: len(values(record)),
        tooltip=lambda record: separator.join(values(record)) or None,
        align_right=True,
        header_tip=header_tip,
    )


class NamedRecordModel(RecordTableModel[N]):
    """Named records as rows, keyed by their name."""

    def __init__(self, columns: Sequence[Column[N]], parent: QObject | None = None) -> None:
        super().__init__(columns, key=lambda record: record.name, parent=parent)
