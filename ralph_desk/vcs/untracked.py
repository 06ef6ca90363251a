"""Files git does not track that a change of the checked-out commit would overwrite or remove.

`git read-tree -m -u` refuses to overwrite an untracked file but overwrites an ignored one (git 2.35 on);
an ignored `.env` holding a secret is exactly what must never be lost, so both are found here first.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from ralph_desk.vcs.places import Where
from ralph_desk.vcs.run import run
from ralph_desk.vcs.tree_changes import Change

SHOWN = 10


def in_the_way(folder: Path, changes: Iterable[Change]) -> list[str]:
    """The untracked and ignored files in the checkout at `folder` that applying `changes` would replace."""
    writes: set[str] = set()
    folders: set[str] = set()
    for change in changes:
        if change.new is None:
            continue
        writes.add(change.path)
        folders.update(str(parent) for parent in PurePosixPath(change.path).parents if str(parent) != ".")
    found: list[str] = []
    candidates: list[str] = []
    for spot in sorted(writes | folders):
        place = folder / spot
        if not os.path.lexists(place):
            continue
        if place.is_dir() and not place.is_symlink():
            if spot in writes and spot not in folders:  # a file replaces this folder: what it holds is lost
                found.extend(_not_in_index_below(folder, spot))
            continue
        candidates.append(spot)
    if candidates:
        tracked = _index(folder)
        found.extend(spot for spot in candidates if spot not in tracked)
    return sorted(dict.fromkeys(found))


def described(folder: Path, paths: list[str]) -> str:
    """`.env (ignored), plan.md (untracked)`, the first few of `paths`."""
    ignored = _ignored(folder, paths[:SHOWN])
    shown = ", ".join(f"{path} ({'ignored' if path in ignored else 'untracked'})" for path in paths[:SHOWN])
    more = len(paths) - SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


def _index(folder: Path) -> set[str]:
    return set(run(folder, "ls-files", "-z", "--cached").stdout.split("\0"))


def _not_in_index_below(folder: Path, spot: str) -> list[str]:
    # Without exclude options ls-files lists every file the index lacks, ignored ones too.
    listing = run(folder, "ls-files", "-z", "--others", "--", f":(literal){spot}").stdout
    return [path for path in listing.split("\0") if path]


def _ignored(folder: Path, paths: list[str]) -> set[str]:
    result = run(
        folder, "check-ignore", "-z", "--stdin", "--no-index", stdin="\0".join(paths) + "\0", ok_codes=(0, 1)
    )
    return {path for path in result.stdout.split("\0") if path}


def ignored(folder: Where, paths: Iterable[str]) -> set[str]:
    """Which of `paths` (relative, with `/`) git ignores in the checkout at `folder`, tracked or not."""
    wanted = list(paths)
    if not wanted:
        return set()
    found = run(
        folder,
        "check-ignore",
        "--no-index",
        "-z",
        "--stdin",
        stdin="\0".join(wanted) + "\0",
        ok_codes=(0, 1),
    )
    return {name for name in found.stdout.split("\0") if name}
