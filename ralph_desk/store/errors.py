"""What the store raises past its own package, importable without SQLAlchemy."""

from __future__ import annotations

import re

# SQLAlchemy's additions to a driver's message: `(sqlite3.OperationalError) ` in front, a link behind.
_DRIVER_PREFIX = re.compile(r"^\((?:[\w.]+)\)\s*")
_BACKGROUND = re.compile(r"\s*\(Background on this error at: [^)]*\)", re.DOTALL)
_STATEMENT = re.compile(r"\s*\[SQL: .*", re.DOTALL)


def in_words(error: BaseException) -> str:
    """An error's message for a person: no driver class, no SQL, no link to SQLAlchemy's site."""
    text = _STATEMENT.sub("", _BACKGROUND.sub("", str(error)))
    return " ".join(_DRIVER_PREFIX.sub("", text.strip()).split())


class StoreError(RuntimeError):
    """The database could not do what was asked; the message says why, in words for a person."""


class StoreBusyError(StoreError):
    """Another process held the database longer than the busy timeout."""


class StoreDataError(StoreError):
    """A stored value cannot be read back (text that is not UTF-8, written outside ralph-desk)."""


class UnreadableRowError(StoreDataError):
    """One row's stored text cannot be read: which row (`kind`, `id`) and why."""

    def __init__(self, kind: str, row_id: int, why: str) -> None:
        super().__init__(f"{kind} #{row_id}: {why}")
        self.kind = kind
        self.row_id = row_id


class StoreGoneError(StoreError):
    """The database file was removed or replaced while it was open: nothing more is written to it."""
