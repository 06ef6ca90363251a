"""Database URLs as text: what they name, without importing SQLAlchemy (every command reads them)."""

from __future__ import annotations

from pathlib import Path


def sqlite_url(path: Path) -> str:
    """The SQLAlchemy URL of a SQLite file."""
    return f"sqlite:///{path.resolve()}"


def backend_name(url: str) -> str:
    """The backend a URL names, as SQLAlchemy reads it: `postgresql+psycopg://…` → `postgresql`."""
    scheme, separator, _ = url.partition("://")
    return scheme.partition("+")[0] if separator else ""


def is_sqlite(url: str) -> bool:
    """Whether a URL names a SQLite database."""
    return backend_name(url) == "sqlite"
