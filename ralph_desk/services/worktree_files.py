"""The untracked files a new worktree needs (config `worktree_files`, e.g. `.env`), copied in from the
person's checkout: only files git ignores (a session would commit any other), never over one there."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from ralph_desk.project import contained
from ralph_desk.project.errors import ProjectError


def copy_into(
    root: Path, folder: Path, listed: Sequence[str], ignored: Callable[[list[str]], set[str]]
) -> list[str]:
    """Copy each `listed` file that git ignores in `folder` (`ignored` says which) from the project at
    `root` into `folder`; a note per file copied or refused."""
    wanted = [path for path in listed if not os.path.lexists(folder / path)]
    if not wanted:
        return []
    allowed = ignored(wanted)
    notes: list[str] = []
    for path in wanted:
        if path not in allowed:
            notes.append(
                f"worktree_files: {path} is not ignored by git, so a session would commit it: not copied"
            )
            continue
        try:
            data = contained.read_bytes(root, root / path)
        except FileNotFoundError:
            continue
        except (ProjectError, OSError) as error:
            notes.append(f"worktree_files: {path} not copied: {error}")
            continue
        descriptor = contained.open_descriptor(
            folder, folder / path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, contained.PRIVATE_FILE_MODE
        )
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(data)
        notes.append(f"worktree_files: copied {path} into the worktree")
    return notes
