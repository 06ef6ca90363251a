"""The person's checkout of a branch: where it is, its own git folder, and what git is in the middle of there.

A checkout that is rebasing or bisecting a branch has a detached HEAD, yet the branch is still in its hands
(git itself refuses to move such a branch): it counts as the branch's checkout here too.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ralph_desk.vcs.run import out


@dataclass(frozen=True)
class Checkout:
    """A folder where a branch is checked out, and the git folder that is its own (a linked worktree's)."""

    folder: Path
    gitdir: Path


# What may be in progress, in the order git's own status looks, and what the person can do about it.
_IN_PROGRESS = (
    ("rebase-apply/applying", "a `git am` is in progress", "git am --continue", "git am --abort"),
    ("rebase-merge", "a rebase is in progress", "git rebase --continue", "git rebase --abort"),
    ("rebase-apply", "a rebase is in progress", "git rebase --continue", "git rebase --abort"),
    ("MERGE_HEAD", "a merge is in progress", "git commit", "git merge --abort"),
    (
        "CHERRY_PICK_HEAD",
        "a cherry-pick is in progress",
        "git cherry-pick --continue",
        "git cherry-pick --abort",
    ),
    ("REVERT_HEAD", "a revert is in progress", "git revert --continue", "git revert --abort"),
    ("sequencer", "a cherry-pick or revert sequence is in progress", "its --continue", "its --abort"),
    ("BISECT_LOG", "a bisect is in progress", "git bisect reset", "git bisect reset"),
)

# Where a detached checkout keeps the branch it is rebasing or bisecting.
_BRANCH_IN_HAND = ("rebase-merge/head-name", "rebase-apply/head-name", "BISECT_START")


def own_gitdir(folder: Path) -> Path:
    """The git folder of the checkout at `folder`: `.git` itself, or where its `.git` file points."""
    dot_git = folder / ".git"
    if dot_git.is_dir():
        return dot_git
    pointer = dot_git.read_text(encoding="utf-8", errors="surrogateescape").strip()
    if not pointer.startswith("gitdir:"):
        raise OSError(f"{dot_git} is neither a git folder nor a `gitdir:` pointer")
    gitdir = Path(pointer.removeprefix("gitdir:").strip())
    return gitdir if gitdir.is_absolute() else (folder / gitdir).resolve()


def holding(repo: Path, base: str) -> Checkout | None:
    """The checkout that has `base` in hand (checked out, or being rebased or bisected), if any."""
    return _find(repo, base, detached_too=True)


def checked_out(repo: Path, base: str) -> Checkout | None:
    """The checkout whose HEAD is on `base`, if any."""
    return _find(repo, base, detached_too=False)


def _find(repo: Path, base: str, detached_too: bool) -> Checkout | None:
    ref = f"refs/heads/{base}"
    for folder, branch in _listed(repo):
        if not folder.is_dir():  # a checkout whose folder is gone (git calls it prunable): nothing to harm
            continue
        if branch == ref or (
            detached_too and branch == "" and _branch_in_hand(own_gitdir(folder)) in (ref, base)
        ):
            return Checkout(folder, own_gitdir(folder))
    return None


def in_progress(checkout: Checkout) -> str | None:
    """What git is in the middle of in the checkout, with how to finish or abort it (None: nothing)."""
    for name, what, finish, abort in _IN_PROGRESS:
        if (checkout.gitdir / name).exists():
            todo = (
                f"end it (`{abort}`)"
                if finish == abort
                else f"finish it (`{finish}`) or abort it (`{abort}`)"
            )
            return f"{what} in {checkout.folder}: {todo}, then approve again"
    return None


def _listed(repo: Path) -> list[tuple[Path, str | None]]:
    """Every checkout git knows with the branch ref it is on: "" when detached, None for a bare repository."""
    found: list[tuple[Path, str | None]] = []
    for line in out(repo, "worktree", "list", "--porcelain").splitlines():
        if line.startswith("worktree "):
            found.append((Path(line.removeprefix("worktree ")), None))
        elif found and line.startswith("branch "):
            found[-1] = (found[-1][0], line.removeprefix("branch "))
        elif found and line == "detached":
            found[-1] = (found[-1][0], "")
    return found


def _branch_in_hand(gitdir: Path) -> str | None:
    for name in _BRANCH_IN_HAND:
        try:
            return (gitdir / name).read_text(encoding="utf-8", errors="surrogateescape").strip()
        except OSError:
            continue
    return None
