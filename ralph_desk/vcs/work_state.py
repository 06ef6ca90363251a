"""A checkout's uncommitted work: HEAD, the dirty paths and their blobs, commits between two HEADs, the stash.

The project's own `.ralph/` folder is left out everywhere: the desk writes there, agents do not.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from ralph_desk.vcs.places import Checkout, GitError, Where
from ralph_desk.vcs.run import run


def folder_of(repo: Where) -> Path:
    """The folder whose files `repo` names (a task worktree: its own, reached through its git folder)."""
    return repo.work_tree if isinstance(repo, Checkout) else repo


def _git(repo: Where, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """`git args` through the one git runner (any exit code: the caller reads it); no optional locks."""
    return run(repo, "--no-optional-locks", *args, stdin=stdin, ok_codes=None)


def is_work_tree(repo: Where) -> bool:
    """Whether `repo` is inside a git work tree (with or without commits)."""
    try:
        result = _git(repo, "rev-parse", "--is-inside-work-tree")
    except GitError:
        return False
    return result.returncode == 0 and result.stdout.strip() == "true"


def tracked_files(repo: Where) -> int:
    """How many files git tracks in `repo` outside `.ralph/` (0 outside a repository)."""
    try:
        result = _git(repo, "ls-files", "-z")
    except GitError:
        return 0
    if result.returncode != 0:
        return 0
    return sum(1 for path in result.stdout.split("\0") if path and not path.startswith(".ralph/"))


def status_entries(status: str) -> list[tuple[str, str, str]]:
    """`(XY, path, original path)` per entry of `git status --porcelain=v1 -z` (original only for renames)."""
    entries: list[tuple[str, str, str]] = []
    fields = status.split("\0")
    index = 0
    while index < len(fields):
        field = fields[index]
        index += 1
        if len(field) < 4:
            continue
        code, path, original = field[:2], field[3:], ""
        if "R" in code or "C" in code:
            original = fields[index] if index < len(fields) else ""
            index += 1  # the rename's source path follows as its own entry
        entries.append((code, path, original))
    return entries


def status(repo: Where) -> str:
    """`git status --porcelain=v1 -z` of every file, untracked ones too."""
    return _git(repo, "status", "--porcelain=v1", "-z", "--untracked-files=all").stdout


def head(repo: Where) -> str | None:
    """The commit HEAD names, or None before the first commit."""
    found = _git(repo, "rev-parse", "HEAD")
    return found.stdout.strip() if found.returncode == 0 else None


def dirty_paths(repo: Where) -> frozenset[str]:
    """The uncommitted paths (untracked ones too) outside `.ralph/`."""
    entries = status_entries(status(repo))
    return frozenset(path for _, path, _ in entries if not path.startswith(".ralph/"))


def blob_hashes(repo: Where, paths: frozenset[str]) -> tuple[tuple[str, str], ...]:
    """`(path, blob hash)` of each path, sorted; '' for a path that is no file (deleted)."""
    folder = folder_of(repo)
    existing = sorted(path for path in paths if (folder / path).is_file())
    hashes = dict.fromkeys(sorted(paths), "")
    if existing:
        result = _git(repo, "hash-object", "--stdin-paths", stdin="\n".join(existing) + "\n")
        blobs = result.stdout.split()
        if result.returncode == 0 and len(blobs) == len(existing):
            hashes.update(zip(existing, blobs, strict=True))
        else:
            hashes.update((path, f"unreadable:{path}") for path in existing)
    return tuple(sorted(hashes.items()))


def committed_between(repo: Where, before: str, after: str) -> list[str]:
    """The paths (outside `.ralph/`) the commits from `before` to `after` changed."""
    diff = _git(repo, "diff", "--name-only", "-z", before, after)
    return [path for path in diff.stdout.split("\0") if path and not path.startswith(".ralph/")]


def stash_changes(repo: Where, message: str, paths: Sequence[str] | None = None) -> bool:
    """Put every uncommitted change (or those of `paths`; untracked files too) aside under `message`.

    True if anything was put aside.
    """
    dirty = dirty_paths(repo)
    chosen = [path for path in paths if path in dirty] if paths is not None else None
    if not dirty or chosen == []:
        return False
    # Literal pathspecs: a file named like a glob is that file only.
    specs = [f":(literal){path}" for path in chosen] if chosen else [".", ":(exclude).ralph"]
    result = _git(repo, "stash", "push", "--include-untracked", "-m", message, "--", *specs)
    return result.returncode == 0
