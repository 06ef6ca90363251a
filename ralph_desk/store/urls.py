"""Database URLs as text: what they name, without importing SQLAlchemy (every command reads them)."""

from __future__ import annotations

import re
from pathlib import Path


def sqlite_url(path: Path) -> str:
    """The SQLAlchemy URL of a SQLite file."""
    return f"sqlite:///{path.resolve()}"


def is_sqlite(url: str) -> bool:
    """Whether a URL names a SQLite database (its backend, as SQLAlchemy reads `sqlite+driver://…`)."""
    scheme, separator, _ = url.partition("://")
    return bool(separator) and scheme.partition("+")[0] == "sqlite"


URL_EXAMPLES = "postgresql+psycopg://USER@HOST:PORT/DB or sqlite:///PATH"
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def looks_like_url(text: str) -> bool:
    """Whether `text` has the shape of a database URL (`scheme://…`): a word without one is not one."""
    return _SCHEME.match(text) is not None
