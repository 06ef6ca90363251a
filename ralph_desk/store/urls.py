"""Database URLs as text: what they name, without importing SQLAlchemy (every command reads them)."""

from __future__ import annotations

from pathlib import Path


def sqlite_url(path: Path) -> str:
    """The SQLAlchemy URL of a SQLite file."""
    return f"sqlite:///{path.resolve()}"


def is_sqlite(url: str) -> bool:
    """Whether a URL names a SQLite database (its backend, as SQLAlchemy reads `sqlite+driver://…`)."""
    scheme, separator, _ = url.partition("://")
    return bool(separator) and scheme.partition("+")[0] == "sqlite"
