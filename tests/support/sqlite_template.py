"""New SQLite databases as copies of one migrated at the start of the run, not migrated one by one.

Opening a new file runs every migration (alembic, a few hundred milliseconds); copying a file already
at head takes a few. The copy is made only where `Database` would have made a fresh file itself: a
SQLite file that does not exist yet, in a folder that does, opened with `migrate_on_open`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url

from ralph_desk.store.engine import PRIVATE_FILE_MODE

Init = Callable[..., None]

enabled = True
"""Off for tests that are about migrating an empty database (marked `migrates_afresh`)."""


def _new_file(url: str) -> Path | None:
    """The SQLite file `url` names when it is a plain path that does not exist yet in an existing folder."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    path = Path(parsed.database)
    return path if path.is_absolute() and path.parent.is_dir() and not path.exists() else None


def _copy(template: bytes, path: Path) -> None:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE)
    with os.fdopen(descriptor, "wb") as out:
        out.write(template)


def opening_copies_of(template: Path, init: Init) -> Init:
    """`Database.__init__` that first copies `template` where a new SQLite file would be migrated."""
    content = template.read_bytes()

    def opened(self: Any, url: str, *args: Any, **kwargs: Any) -> None:
        path = _new_file(url) if enabled and kwargs.get("migrate_on_open", True) else None
        if path is not None:
            with contextlib.suppress(FileExistsError):  # made meanwhile by someone else: theirs stands
                _copy(content, path)
        init(self, url, *args, **kwargs)

    return opened
