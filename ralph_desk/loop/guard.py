"""`allowed_paths`: which changed files lie outside the globs agents may edit, and putting them aside.

A glob is relative to the project: `*` and `?` stay within one folder, `**` crosses folders, and a
glob without wildcards also covers everything below it (`docs` allows `docs/guide.md`). In a git
repository the files outside are stashed under a named message; outside git the agent's versions
are copied to `.ralph/put-aside/<session>/` and new files are taken out of the tree (a rewritten
file cannot be restored there: its copy is kept, and the flag says so). Nothing is lost either way.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ralph_desk.domain.session import safe_file_stem
from ralph_desk.loop import git
from ralph_desk.project import ProjectError, contained
from ralph_desk.vcs import work_state
from ralph_desk.vcs.places import Where

PUT_ASIDE_DIR = "put-aside"


class EditsNotHeldError(ProjectError):
    """A run that may not edit, with an agent nothing can hold to it: refused before it starts."""


def check_read_only_held(agent: str, allow_edits: bool, root: Path) -> None:
    """Refuse a read-only run whose edits nothing could stop or undo: a command agent outside git.

    Claude Code and Codex are started in their own read-only modes; a command agent has none, and
    only in a git repository can the loop put its edits aside afterwards.
    """
    if allow_edits or agent != "command" or work_state.is_work_tree(root):
        return
    raise EditsNotHeldError(
        f"edits are not allowed (allow_edits is false), but the command agent has no read-only mode and "
        f"{root} is not in a git repository, where its edits could be put aside: allow edits "
        "(allow_edits true), or put the project under git (`git init`)"
    )


@cache
def _pattern(glob: str) -> re.Pattern[str]:
    parts: list[str] = []
    index = 0
    while index < len(glob):
        if glob.startswith("**/", index):
            parts.append("(?:.*/)?")
            index += 3
        elif glob.startswith("**", index):
            parts.append(".*")
            index += 2
        elif glob[index] == "*":
            parts.append("[^/]*")
            index += 1
        elif glob[index] == "?":
            parts.append("[^/]")
            index += 1
        else:
            parts.append(re.escape(glob[index]))
            index += 1
    below = "" if any(mark in glob for mark in "*?") else "(?:/.*)?"
    return re.compile("".join(parts).rstrip("/") + below)


def allows(globs: Sequence[str], path: str) -> bool:
    """Whether `path` (relative, POSIX) matches one of `globs`; no globs allow everything."""
    return not globs or any(_pattern(glob.removeprefix("./")).fullmatch(path) for glob in globs)


def outside(globs: Sequence[str], changed: Sequence[str]) -> list[str]:
    """The changed paths no glob allows."""
    return [path for path in changed if not allows(globs, path)]


@dataclass(frozen=True)
class PutAside:
    """Where edits outside the allowed paths went, and which of them are still in the tree."""

    where: str
    left_in_tree: tuple[str, ...] = ()


def put_aside(
    repo: Where, ralph_dir: Path, session_id: str, paths: Sequence[str], before: git.GitState
) -> PutAside:
    """Take `paths` out of the tree, kept where the result says (a git stash, or copies under .ralph/)."""
    message = f"ralph-desk: session {session_id} edited outside allowed_paths"
    if before.files is None:
        return _stash(repo, message, paths)
    folder = ralph_dir / PUT_ASIDE_DIR / safe_file_stem(session_id)
    left: list[str] = []
    for path in paths:
        source = work_state.folder_of(repo) / path
        if source.is_symlink() or source.is_file():
            target = folder / path
            contained.make_folder(ralph_dir.parent, target.parent)  # never through a planted link
            shutil.copy2(source, target, follow_symlinks=False)
            if path in before.files:
                left.append(path)  # no earlier version to go back to outside git
            else:
                source.unlink()
    return PutAside(str(folder), tuple(left))


def _stash(repo: Where, message: str, paths: Sequence[str]) -> PutAside:
    dirty = git.state(repo).dirty
    git.stash_changes(repo, message, paths)
    # Left in the tree: what the session committed itself (not dirty), and what the stash did not take.
    still = git.state(repo).dirty
    return PutAside(f"git stash {message!r}", tuple(p for p in paths if p not in dirty or p in still))
