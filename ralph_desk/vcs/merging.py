"""Merging a task branch into the base without a working tree: nothing is ever half-merged.

The merge is computed with `git merge-tree --write-tree` (objects only), the new base commit is
written with `commit-tree`, and the base branch moves with one compare-and-swap `update-ref`: a
crash leaves it before or after, never between. When the base branch is checked out somewhere (the
person's own checkout), that checkout's index and files are brought along with `read-tree -m -u`,
which refuses — before anything moves — when it would overwrite an uncommitted change.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ralph_desk.domain.enums import MergeStrategy
from ralph_desk.vcs.run import GitError, agent_identity, is_ancestor, out, rev, run
from ralph_desk.vcs.worktrees import checkouts


class MergeRefusedError(RuntimeError):
    """A merge that would touch someone's uncommitted work, or that git cannot do; nothing was changed."""


@dataclass(frozen=True)
class MergeResult:
    """What a merge came to: the base's new commit, or the conflicting files (and the base untouched)."""

    merged: bool
    base: str
    commit: str | None = None
    conflicts: tuple[str, ...] = field(default_factory=tuple)
    reason: str | None = None


def merge(repo: Path, base: str, commit: str, strategy: MergeStrategy, text: str) -> MergeResult:
    """Merge exactly `commit` (an object id) into `base` by `strategy`; conflicts leave every branch and
    checkout as it was."""
    old = rev(repo, f"refs/heads/{base}")
    tip = rev(repo, commit)
    if old is None or tip is None:
        missing = f"the branch {base!r}" if old is None else f"the commit {commit}"
        raise MergeRefusedError(f"{missing} does not exist")
    if is_ancestor(repo, tip, old):
        return MergeResult(True, base, old)
    new = _new_commit(repo, old, tip, strategy, text)
    if isinstance(new, MergeResult):
        return new
    if new == old:
        return MergeResult(True, base, old)
    checkout = checkouts(repo).get(base)
    if checkout is not None:
        _follow(checkout, old, new, dry_run=True)
        _follow(checkout, old, new)
    try:
        run(repo, "update-ref", "-m", f"ralph-desk: merge {tip}", f"refs/heads/{base}", new, old)
    except GitError:
        if checkout is not None:
            _follow(checkout, new, old)  # the base moved meanwhile: the checkout goes back where it was
        raise
    return MergeResult(True, base, new)


def _new_commit(repo: Path, old: str, tip: str, strategy: MergeStrategy, text: str) -> str | MergeResult:
    if strategy is MergeStrategy.FF_ONLY:
        if is_ancestor(repo, old, tip):
            return tip
        return MergeResult(False, "", reason="the base branch moved on: a fast-forward is not possible")
    result = run(
        repo, "merge-tree", "--write-tree", "--name-only", "--no-messages", old, tip, ok_codes=(0, 1)
    )
    lines = result.stdout.split("\n")
    if result.returncode == 1:
        conflicts = tuple(dict.fromkeys(line for line in lines[1:] if line))
        return MergeResult(False, "", conflicts=conflicts, reason="the branch conflicts with the base")
    tree = lines[0].strip()
    if strategy is MergeStrategy.SQUASH and tree == out(repo, "rev-parse", f"{old}^{{tree}}"):
        return old  # already on the base (a squash merged before a crash kept it off the queue)
    parents = ("-p", old, "-p", tip) if strategy is MergeStrategy.MERGE else ("-p", old)
    return run(
        repo, "commit-tree", tree, *parents, "-F", "-", env=agent_identity(), stdin=text
    ).stdout.strip()


def _follow(checkout: Path, old: str, new: str, dry_run: bool = False) -> None:
    """Move a checkout's index and files from `old` to `new`, keeping (or refusing to touch) local changes."""
    flags = ("-n",) if dry_run else ()
    try:
        run(checkout, "read-tree", "-m", "-u", *flags, old, new)
    except GitError as error:
        raise MergeRefusedError(
            f"the merge would overwrite uncommitted changes in {checkout}: {error.stderr.strip()} — "
            "commit or stash them there, then approve again"
        ) from None


def is_clean_merge(repo: Path, base: str, branch: str) -> bool:
    """Whether `branch` would merge into `base` without a conflict (nothing is written but loose objects)."""
    old, tip = rev(repo, f"refs/heads/{base}"), rev(repo, f"refs/heads/{branch}")
    if old is None or tip is None:
        return False
    return run(repo, "merge-tree", "--write-tree", old, tip, ok_codes=(0, 1)).returncode == 0


def head_of(repo: Path, base: str) -> str:
    """The commit the base branch stands on."""
    return out(repo, "rev-parse", f"refs/heads/{base}")
