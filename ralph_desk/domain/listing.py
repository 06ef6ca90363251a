"""A list of records that tells which items could not be read, so one bad row never hides the others."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class ItemError:
    """One item a list could not read: what it is (`task`), its id and why."""

    kind: str
    id: int | str
    message: str

    def __str__(self) -> str:
        return f"{self.kind} #{self.id}: {self.message}"


class Listing(list[T]):
    """The items that read, in order, and `errors`: one `ItemError` for each item that did not."""

    errors: tuple[ItemError, ...]

    def __init__(self, items: Iterable[T] = (), errors: Iterable[ItemError] = ()) -> None:
        super().__init__(items)
        self.errors = tuple(errors)

    def kept(self, items: Iterable[T]) -> Listing[T]:
        """Other items (a filtered or reordered view of these) with the same errors."""
        return Listing(items, self.errors)


def errors_of(items: object) -> tuple[ItemError, ...]:
    """The item errors of a list (none for a plain list)."""
    return items.errors if isinstance(items, Listing) else ()
