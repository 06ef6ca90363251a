"""What a checkout holds at some paths: the object its index has for each, and the object its file is.

Both are object ids to compare with the blobs of commits (None: nothing there). A file is hashed as it is
on disk, without filters; a symbolic link as its target; a submodule's folder as the commit its index
entry names. What no commit can hold as it is (a conflicted entry, a folder where a file would be, a path
reached through a link) is `UNKNOWN`, which equals no object id.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ralph_desk.vcs.run import run

UNKNOWN = "unknown"
GITLINK = "160000"
HASHED_AT_ONCE = 200


@dataclass(frozen=True)
class Held:
    """The object the index has at a path and the object its file is (None: absent; UNKNOWN)."""

    index: str | None
    file: str | None


def held(folder: Path, paths: Iterable[str]) -> dict[str, Held]:
    """What the checkout at `folder` holds at each of `paths`."""
    wanted = list(dict.fromkeys(paths))
    entries = _index_entries(folder, set(wanted))
    files: dict[str, str | None] = {}
    regular: list[str] = []
    for path in wanted:
        found = _file_kind(folder, path, entries.get(path))
        if found == "file":
            regular.append(path)
        else:
            files[path] = found
    files.update(_hashed(folder, regular))
    return {path: Held(entries[path][1] if path in entries else None, files[path]) for path in wanted}


def _index_entries(folder: Path, wanted: set[str]) -> dict[str, tuple[str, str]]:
    """The (mode, object) the index has at each wanted path; UNKNOWN as the object when it is conflicted."""
    found: dict[str, tuple[str, str]] = {}
    for record in run(folder, "ls-files", "--stage", "-z").stdout.split("\0"):
        meta, _, path = record.partition("\t")
        if path not in wanted:
            continue
        mode, oid, stage = meta.split()
        found[path] = (mode, oid) if stage == "0" and path not in found else (mode, UNKNOWN)
    return found


def _file_kind(folder: Path, path: str, entry: tuple[str, str] | None) -> str | None:
    """None when nothing is there, "file" for a regular file still to hash, else the object or UNKNOWN."""
    place = folder / path
    inside = (parent for parent in place.parents if parent.is_relative_to(folder) and parent != folder)
    if any(parent.is_symlink() for parent in inside):
        return UNKNOWN  # what a link leads to is not the checkout's
    if not os.path.lexists(place):
        return None
    if place.is_symlink():
        target = os.readlink(place)
        return run(folder, "hash-object", "--no-filters", "--stdin", stdin=target).stdout.strip()
    if place.is_dir():
        return entry[1] if entry is not None and entry[0] == GITLINK else UNKNOWN
    return "file" if place.is_file() else UNKNOWN


def _hashed(folder: Path, paths: list[str]) -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for start in range(0, len(paths), HASHED_AT_ONCE):
        chunk = paths[start : start + HASHED_AT_ONCE]
        lines = run(folder, "hash-object", "--no-filters", "--", *chunk).stdout.split("\n")
        found.update(zip(chunk, (line.strip() for line in lines), strict=False))
    return found
