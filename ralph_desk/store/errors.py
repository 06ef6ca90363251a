"""What the store raises past its own package, importable without SQLAlchemy."""

from __future__ import annotations


class StoreBusyError(RuntimeError):
    """Another process held the database longer than the busy timeout."""
