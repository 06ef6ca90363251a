"""Outside git: which files a session changed, from a snapshot of the project's file tree before and after.

A snapshot keeps each file's size, modification time and kind, never its content: cheap enough for
every session, and any write an agent makes moves the time. The project's `.ralph/` folder, version
control folders and folders tools fill by themselves (dependencies, caches, virtual environments)
are left out. Symbolic links are recorded, never followed: a hostile folder cannot lead the walk
outside the project.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path

log = logging.getLogger("ralph_desk.loop")

IGNORED_FOLDERS = frozenset(
    {
        ".ralph",
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
    }
)
# A tree larger than this is not walked to the end; what was seen still counts.
MAX_ENTRIES = 200_000

Signature = tuple[int, int, bool]  # size, modification time (ns), is a symbolic link
Snapshot = Mapping[str, Signature]


def snapshot(root: Path) -> dict[str, Signature]:
    """Every file under `root` (POSIX paths relative to it) with its signature, ignored folders left out."""
    found: dict[str, Signature] = {}
    pending = [root]
    while pending and len(found) < MAX_ENTRIES:
        folder = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError as error:
            log.debug("cannot list %s: %s", folder, error)
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in IGNORED_FOLDERS:
                        pending.append(Path(entry.path))
                    continue
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            relative = Path(entry.path).relative_to(root).as_posix()
            found[relative] = (info.st_size, info.st_mtime_ns, entry.is_symlink())
    return found


def changed(before: Snapshot, after: Snapshot) -> list[str]:
    """Files added, removed or rewritten between two snapshots, sorted."""
    return sorted(path for path in before.keys() | after.keys() if before.get(path) != after.get(path))
