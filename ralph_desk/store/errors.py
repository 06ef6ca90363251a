"""What the store raises past its own package, importable without SQLAlchemy; the one place a driver's
fault (SQLite's, PostgreSQL's) becomes words for a person."""

from __future__ import annotations

import re
from pathlib import Path

# SQLAlchemy's additions to a driver's message: `(sqlite3.OperationalError) ` in front, a link behind.
_DRIVER_PREFIX = re.compile(r"^\((?:[\w.]+)\)\s*")
_BACKGROUND = re.compile(r"\s*\(Background on this error at: [^)]*\)", re.DOTALL)
_STATEMENT = re.compile(r"\s*\[SQL: .*", re.DOTALL)

REPAIR = (
    "to repair it, restore the file from a backup, or move it aside (keeping it) and run "
    "`ralph-desk init --force`, which starts an empty database"
)
FULL = "the disk holding the database is full: nothing was written; free some space on it and try again"
READ_ONLY = (
    "the project's database cannot be written: its file or folder is read-only (not damaged); nothing "
    "was written — make .ralph/db writable and try again"
)
# Each fault as the drivers word it, lower case: SQLite's result texts, PostgreSQL's (psycopg's) messages.
_FULL_WORDS = ("database or disk is full", "no space left on device", "could not extend file", "disk full")
_READ_ONLY_WORDS = ("readonly", "read-only")
_DAMAGED_WORDS = ("database disk image is malformed", "file is not a database", "file is encrypted")
_BUSY_WORDS = ("locked", "busy", "lock timeout")
_IO_WORDS = ("disk i/o error", "unable to open database file")


def in_words(error: BaseException) -> str:
    """An error's message for a person: no driver class, no SQL, no link to SQLAlchemy's site."""
    text = _STATEMENT.sub("", _BACKGROUND.sub("", str(error)))
    return " ".join(_DRIVER_PREFIX.sub("", text.strip()).split())


class StoreError(RuntimeError):
    """The database could not do what was asked; the message says why, in words for a person."""


class StoreBusyError(StoreError):
    """Another process held the database longer than the busy timeout."""


class StoreFullError(StoreError):
    """The disk holding the database has no room left: nothing was written."""


class StoreReadOnlyError(StoreError):
    """The database's file, folder or file system cannot be written (nothing is damaged)."""


class StoreDamagedError(StoreError):
    """The database file is not a sound SQLite database; the message says how to repair it."""


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


def fault_of(driver_message: str, busy_timeout_s: float, folder: Path | None = None) -> StoreError | None:
    """The store's error for a driver's message, in words for a person; None for one it does not know.

    `folder`: where the SQLite file lives. SQLite says only "disk I/O error" when it cannot grow its
    shared-memory file on a full disk, and "unable to open" the file in a folder it cannot write: the
    folder's disk and mode tell which.
    """
    message = driver_message.lower()
    if any(words in message for words in _FULL_WORDS):
        return StoreFullError(FULL)
    if any(words in message for words in _BUSY_WORDS):
        return StoreBusyError(
            f"the database is held by another process for longer than the busy timeout "
            f"({busy_timeout_s:g} s); nothing was written — try again"
        )
    if any(words in message for words in _READ_ONLY_WORDS):
        return StoreReadOnlyError(READ_ONLY)
    if any(words in message for words in _IO_WORDS) and folder is not None:
        from ralph_desk.store.health import no_room, writable  # health imports this module

        if no_room(folder):
            return StoreFullError(FULL)
        if not writable(folder):
            return StoreReadOnlyError(READ_ONLY)
        return None
    if any(words in message for words in _DAMAGED_WORDS):
        return StoreDamagedError(f"the database is damaged ({' '.join(driver_message.split())}); {REPAIR}")
    return None
