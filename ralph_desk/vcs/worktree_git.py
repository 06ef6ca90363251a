"""A task worktree reached through the repository that made it, after checking it still belongs there.

An agent works inside its worktree and can rewrite `<worktree>/.git`: point it at another git folder
(whose config names programs), replace it with a folder of its own, or remove it. The desk's git never
follows that file: it names the git folder the repository recorded for the worktree, and refuses a
worktree whose `.git` and that record no longer point at each other.
"""

from __future__ import annotations

import os
from pathlib import Path

from ralph_desk.vcs.places import Checkout
from ralph_desk.vcs.run import out

GITDIR_PREFIX = "gitdir:"
POINTER_LIMIT = 4096  # a `.git` or `gitdir` file is one short line; anything longer is not one git wrote


class WorktreeIntegrityError(RuntimeError):
    """A task worktree the desk will not commit from: its `.git` or its branch is not what the desk made."""


def common_dir(repo: Path) -> Path:
    """The repository's shared git folder (`.git` of the person's checkout)."""
    found = Path(out(repo, "rev-parse", "--path-format=absolute", "--git-common-dir"))
    return found if found.is_absolute() else repo / found


def checkout_of(repo: Path, worktree: Path) -> Checkout:
    """`worktree` through `repo`'s record of it; WorktreeIntegrityError when its `.git` was tampered with."""
    record = record_of(repo, worktree)
    if record is None:
        raise WorktreeIntegrityError(
            f"the repository at {repo} has no record of the worktree {worktree} (was it removed with "
            "`git worktree remove`, or moved?)"
        )
    problem = pointer_problem(worktree / ".git", record)
    if problem is not None:
        raise WorktreeIntegrityError(
            f"the worktree {worktree} no longer belongs to the repository that made it: its .git {problem} "
            f"(expected a file saying `gitdir: {record}`)"
        )
    return Checkout(worktree, record)


def record_of(repo: Path, worktree: Path) -> Path | None:
    """The repository's record of `worktree` (the folder under `.git/worktrees/` whose `gitdir` file names
    `<worktree>/.git`), if it has one."""
    own = _real(worktree)
    records = _entries(common_dir(repo) / "worktrees")
    return next((entry for entry in records if _points_back(entry, own)), None)


def pointer_problem(dot_git: Path, record: Path) -> str | None:
    """What is wrong with `<worktree>/.git` (None when it is a file naming `record`)."""
    if dot_git.is_symlink():
        return "is a symbolic link"
    if dot_git.is_dir():
        return "was replaced by a folder (a repository of its own)"
    if not dot_git.is_file():
        return "is missing"
    text = _small_text(dot_git)
    if text is None or not text.startswith(GITDIR_PREFIX):
        return "does not name a git folder"
    named = Path(text.removeprefix(GITDIR_PREFIX).strip())
    target = named if named.is_absolute() else dot_git.parent / named
    if _real(target) != _real(record):
        return f"points at {named} instead"
    return None


def _entries(registry: Path) -> list[Path]:
    try:
        return sorted(entry for entry in registry.iterdir() if entry.is_dir() and not entry.is_symlink())
    except OSError:
        return []


def _points_back(record: Path, worktree: str) -> bool:
    """Whether the record's `gitdir` file names `<worktree>/.git` (a relative name is the record's own)."""
    text = _small_text(record / "gitdir")
    if text is None:
        return False
    named = Path(text)
    named = named if named.is_absolute() else record / named
    return named.name == ".git" and _real(named.parent) == worktree


def _small_text(file: Path) -> str | None:
    """The stripped text of a short plain file git wrote; None when missing, a link, too long or not text."""
    try:
        if file.is_symlink() or not file.is_file():
            return None
        with file.open("rb") as handle:
            raw = handle.read(POINTER_LIMIT + 1)
    except OSError:
        return None
    if len(raw) > POINTER_LIMIT:
        return None
    return raw.decode("utf-8", errors="surrogateescape").strip()


def _real(path: Path) -> str:
    return os.path.realpath(path)
