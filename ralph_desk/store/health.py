"""Whether a database can be opened as ralph-desk's, checked without changing it (for `validate`)."""

from __future__ import annotations

import re
import shutil
import sqlite3
import tempfile
from pathlib import Path

from ralph_desk.store.errors import REPAIR, StoreError, in_words
from ralph_desk.store.urls import is_sqlite

READ_ONLY_FOLDER = (
    "read-only: ralph-desk writes its database here (and the -wal and -shm files beside it), so it cannot "
    "open the project (nothing is damaged); make the folder writable, or copy the project somewhere writable"
)
ROOM = 64 * 1024  # less free space than this on the database's disk is a full disk to SQLite
EXPECTED_TABLES = frozenset({"project", "features", "disciplines", "tasks", "task_signals"})


def sqlite_file(url: str) -> Path | None:
    """The file of a `sqlite:///FILE` URL (None for other databases and in-memory SQLite)."""
    if not is_sqlite(url):
        return None
    location = url.split("://", 1)[1].split("?", 1)[0]
    if not location.startswith("/") or location in ("/", "/:memory:"):
        return None
    return Path(location[1:])


def sqlite_problems(db_file: Path, read_only: bool = False) -> list[str]:
    """What is wrong with a SQLite file as ralph-desk's database (empty when it is sound).

    `read_only`: its folder cannot be written, so it is read as immutable (SQLite cannot make the
    shared-memory file a WAL database needs there, which would read as "unable to open").
    """
    if not db_file.exists():
        return ["missing database; `ralph-desk init --force` creates it"]
    if not db_file.is_file():
        return ["not a file"]
    # A folder that cannot be written (a read-only mount) makes SQLite "unable to open" a WAL database:
    # it is read as immutable, and said to be read-only, never damaged.
    folder_read_only = not read_only and not writable(db_file.parent)
    read_only = read_only or folder_read_only
    # Opened read-only through the standard library: a database we do not understand stays untouched.
    try:
        immutable = "&immutable=1" if read_only else ""
        connection = sqlite3.connect(f"{db_file.resolve().as_uri()}?mode=ro{immutable}", uri=True)
    except sqlite3.Error as error:
        return [f"cannot open the database: {error}"]
    try:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        revision = None
        if "alembic_version" in tables:
            row = connection.execute("SELECT version_num FROM alembic_version").fetchone()
            revision = row[0] if row else None
        check = connection.execute("PRAGMA quick_check").fetchone()
    except sqlite3.DatabaseError as error:
        return [f"unreadable: {error} (not a SQLite database, or damaged); {REPAIR}"]
    finally:
        connection.close()
    if not tables:
        return ["empty database without the ralph-desk schema; `ralph-desk init --force` creates it"]
    if "alembic_version" not in tables or not tables >= EXPECTED_TABLES:
        return ["not a ralph-desk database (its tables are not ralph-desk's)"]
    from ralph_desk.store import migrate  # alembic is slow to import; only validate needs it

    problems: list[str] = []
    if revision is not None and revision not in migrate.known_revisions():
        problems.append(
            f"schema revision {revision!r} is newer than this ralph-desk knows "
            f"(newest known: {migrate.head_revision()!r}); upgrade ralph-desk to open it"
        )
    if check is None or check[0] != "ok":
        problems.append(f"integrity check failed: {check[0] if check else 'no answer'}; {REPAIR}")
    return [READ_ONLY_FOLDER, *problems] if folder_read_only else problems


def writable(folder: Path) -> bool:
    """Whether a file can be created in `folder` (a read-only mount or permissions say no); leaves nothing."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def no_room(folder: Path) -> bool:
    """Whether the disk holding `folder` has (next to) no space left for a file to grow."""
    try:
        return shutil.disk_usage(folder).free < ROOM
    except OSError:  # the folder is gone
        return False


def url_problems(url: str) -> list[str]:
    """What stops the database at a (non-SQLite-file) URL from opening (empty when it opens)."""
    from ralph_desk.store import migrate
    from ralph_desk.store.database import Database

    try:
        database = Database(url, migrate_on_open=False)
    except (migrate.SchemaTooNewError, StoreError) as error:  # in words already
        return [str(error)]
    except Exception as error:  # any driver or network failure is a problem to report, not a crash
        return [f"cannot open the database: {in_words(error)}"]
    database.dispose()
    return []


def passwords_in(text: str) -> list[str]:
    """The passwords of the database URLs in `text` (`user:PASSWORD@host`, `password=PASSWORD`)."""
    found = re.findall(r"[?&]password=([^&\s]+)", text)
    found += re.findall(r"://[^/\s:@]*:([^@\s]+)@", text)
    return [password for password in found if password != "***"]


def redacted(url: str) -> str:
    """A database URL fit to show: its password hidden (without importing SQLAlchemy)."""
    url = re.sub(r"([?&]password=)[^&]*", r"\1***", url)  # libpq takes a password as a parameter too
    scheme, separator, rest = url.partition("://")
    if not separator or "@" not in rest:
        return url
    credentials, _, host = rest.rpartition("@")
    user, colon, _ = credentials.partition(":")
    return f"{scheme}://{user}:***@{host}" if colon else url
