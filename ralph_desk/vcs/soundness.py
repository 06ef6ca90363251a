"""Whether a task worktree is still one: its folder, its `.git` file and the repository's record of it agree.

An agent works inside its worktree and may delete it, remove it with `git worktree remove`, or break or
re-aim its `.git` file. Before the desk commits there (or lets another session work there) it checks,
reading the files rather than running git inside a folder the agent controlled (`worktree_git`, the one
check of a worktree's `.git` against the repository's record of it).
"""

from __future__ import annotations

from pathlib import Path

from ralph_desk.vcs import worktree_git
from ralph_desk.vcs.run import run


def damage(repo: Path, path: Path) -> str | None:
    """What became of the worktree at `path` (words that follow "the worktree"); None when it is sound."""
    if path.is_symlink() or not path.is_dir():
        return "was deleted"
    dot_git = path / ".git"
    if dot_git.is_symlink() or not dot_git.is_file():
        return "lost its .git file"
    record = worktree_git.record_of(repo, path)
    if record is None:
        return "is no longer known to git (its record under .git/worktrees is gone)"
    if worktree_git.pointer_problem(dot_git, record) is not None:
        return "has a .git file that no longer points to its record in the repository"
    return None


def mend(repo: Path, path: Path) -> bool:
    """Whether the worktree at `path` is sound, once git has rewritten a broken `.git` file (when it can)."""
    if damage(repo, path) is None:
        return True
    if path.is_dir() and not path.is_symlink() and worktree_git.record_of(repo, path) is not None:
        run(repo, "worktree", "repair", "--", str(path), ok_codes=None)
    return damage(repo, path) is None
