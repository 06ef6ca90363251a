"""The base branch of a git project: the branch its tasks start from and merge into, or why it has none.

Outside git, and in a repository without a commit, there is no base and nothing is wrong: sessions work
in the project folder. In a repository with commits there must be one; the loop never falls back to the
person's own checkout.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ralph_desk.domain.branches import BRANCH_PREFIX
from ralph_desk.vcs.places import GitError
from ralph_desk.vcs.refs import current_branch
from ralph_desk.vcs.run import out, run

HEADS = "refs/heads/"
BRANCHES_NAMED = 8  # the most branches a problem names as the ones to choose from


@dataclass(frozen=True)
class Base:
    """The base branch, or (in a git project) why there is none: a sentence that says how to fix it."""

    branch: str | None
    problem: str | None = None


def base_of(root: Path, configured: str | None) -> Base:
    """The base of the repository at `root`: `configured` (base_branch), else the branch checked out."""
    try:
        if not _in_work_tree(root):
            return Base(None)
        branches = _branches(root)
        if not branches:
            return Base(None)  # a repository without a commit yet
        checked_out = current_branch(root)
    except GitError as error:
        return Base(None, f"git cannot tell the branches of this repository: {error}")
    if configured is not None:
        if configured in branches:
            return Base(configured)
        return Base(
            None,
            f"base_branch {configured!r} in .ralph/config.json is not a branch of this repository, so no "
            f"task can start from it; name an existing branch in base_branch "
            f"({_choices(branches, checked_out)}), or set it to null to use the branch checked out",
        )
    if checked_out in branches:
        return Base(checked_out)
    where = (
        "no branch is checked out (a detached HEAD)"
        if checked_out is None
        else f"the branch checked out, {checked_out!r}, has no commit"
    )
    return Base(
        None,
        f"no base_branch is set in .ralph/config.json and {where}, so tasks have no branch to start from; "
        f"check out a branch (`git switch BRANCH`), or name one in base_branch ({_choices(branches, None)})",
    )


def _in_work_tree(root: Path) -> bool:
    """Whether `root` is inside a git work tree (with or without a commit)."""
    absolute = root.absolute()
    if not root.is_dir() or not any((folder / ".git").exists() for folder in (absolute, *absolute.parents)):
        return False  # a plain folder: told from the folders, without running git
    found = run(root, "rev-parse", "--is-inside-work-tree", ok_codes=None)
    return found.returncode == 0 and found.stdout.strip() == "true"


def _branches(root: Path) -> list[str]:
    """Every local branch, by its short name (exact names: no revision syntax is read)."""
    listing = out(root, "for-each-ref", "--format=%(refname)", HEADS)
    return [name.removeprefix(HEADS) for name in listing.splitlines() if name.startswith(HEADS)]


def _choices(branches: list[str], checked_out: str | None) -> str:
    """The branches a person would pick from (task branches left out), the one checked out first."""
    mine = [name for name in branches if not name.startswith(BRANCH_PREFIX)]
    ordered = sorted(mine, key=lambda name: (name != checked_out, name))
    if not ordered:
        return "this repository has no branch of its own yet"
    shown = ", ".join(ordered[:BRANCHES_NAMED]) + (" …" if len(ordered) > BRANCHES_NAMED else "")
    return f"branches: {shown}"
