"""What the store raises past its own package, importable without SQLAlchemy."""

from __future__ import annotations


class StoreError(RuntimeError):
    """The database could not do what was asked; the message says why, in words for a person."""


class StoreBusyError(StoreError):
    """Another process held the database longer than the busy timeout."""


class StoreDataError(StoreError):
    """A stored value cannot be read back (text that is not UTF-8, written outside ralph-desk)."""


class StoreGoneError(StoreError):
    """The database file was removed or replaced while it was open: nothing more is written to it."""
