"""Merging an approved commit into the base without a working tree: nothing is ever half-merged.

The merge is computed with `git merge-tree --write-tree` (objects only), the new base commit is
written with `commit-tree`, and the base branch moves with one compare-and-swap `update-ref`: a
crash leaves it before or after, never between. When the base branch is in the hands of a checkout
(the person's own), the merge is refused while git is in the middle of something there, or when it
would replace a file git does not track (an ignored `.env` too); otherwise the checkout's index and
files are brought along with `read-tree -m -u`, which refuses — before anything moves — when it
would overwrite an uncommitted change. A journal written first lets the next merge turn put the
checkout right if the process is killed between moving the checkout and moving the branch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ralph_desk.domain.enums import MergeStrategy
from ralph_desk.vcs import merge_journal, tree_changes, untracked
from ralph_desk.vcs.checkout_state import Checkout, holding, in_progress
from ralph_desk.vcs.merge_journal import Journal, JournalError
from ralph_desk.vcs.names import is_object_id
from ralph_desk.vcs.places import GitError
from ralph_desk.vcs.refs import is_ancestor, rev
from ralph_desk.vcs.run import agent_identity, out, run


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


@dataclass(frozen=True)
class Planned:
    """A merge worked out and not made yet: the base's commit now, and the commit it would move to."""

    base: str
    old: str
    new: str
    commit: str


def merge(repo: Path, base: str, commit: str, strategy: MergeStrategy, text: str) -> MergeResult:
    """Merge the approved `commit` (a full object id) into `base` by `strategy`; a conflict moves nothing."""
    planned = plan(repo, base, commit, strategy, text)
    return planned if isinstance(planned, MergeResult) else land(repo, planned)


def plan(repo: Path, base: str, commit: str, strategy: MergeStrategy, text: str) -> Planned | MergeResult:
    """The commit merging `commit` into `base` would make, written but not on any branch; a MergeResult
    when there is nothing to move (the work is on the base already) or it conflicts."""
    if not is_object_id(commit):
        raise MergeRefusedError(f"{commit!r} is not a full commit id (40 or 64 lowercase hex digits)")
    recover_interrupted(repo)
    old = rev(repo, f"refs/heads/{base}")
    if old is None:
        raise MergeRefusedError(f"the branch {base!r} does not exist")
    tip = rev(repo, commit)
    if tip != commit:
        raise MergeRefusedError(f"the commit {commit} does not exist in {repo}")
    _checkout(repo, base)
    if is_ancestor(repo, tip, old):
        return MergeResult(True, base, old)
    new = _new_commit(repo, old, tip, strategy, text)
    if isinstance(new, MergeResult):
        return new
    if new == old:
        return MergeResult(True, base, old)
    return Planned(base, old, new, commit)


def land(repo: Path, planned: Planned) -> MergeResult:
    """Move the base from exactly the commit it was planned on to the planned one (its checkout along)."""
    ref = f"refs/heads/{planned.base}"
    checkout = _checkout(repo, planned.base)
    if rev(repo, ref) != planned.old:
        raise MergeRefusedError(
            f"{planned.base!r} moved on while the merge was checked (a commit made there meanwhile?) — "
            "approve again"
        )
    if checkout is None:
        run(repo, "update-ref", "-m", f"ralph-desk: merge {planned.commit}", ref, planned.new, planned.old)
    else:
        _move_with(repo, checkout, ref, planned.old, planned.new, planned.commit)
    return MergeResult(True, planned.base, planned.new)


def recover_interrupted(repo: Path) -> str | None:
    """Put right the checkout a merge killed midway left (see merge_journal); what was done, if anything."""
    try:
        return merge_journal.recover(repo)
    except (JournalError, GitError, OSError) as error:
        raise MergeRefusedError(
            f"an interrupted merge could not be put right: {error} — nothing merges until it is"
        ) from None


def _checkout(repo: Path, base: str) -> Checkout | None:
    """The checkout holding `base`, refused while git is in the middle of something there."""
    try:
        checkout = holding(repo, base)
    except OSError as error:
        raise MergeRefusedError(f"the checkout of {base!r} cannot be read: {error}") from None
    busy = None if checkout is None else in_progress(checkout)
    if busy is not None:
        raise MergeRefusedError(busy)
    return checkout


def _move_with(repo: Path, checkout: Checkout, ref: str, old: str, new: str, commit: str) -> None:
    """Move `ref` from `old` to `new` with the checkout's index and files, journalled in between."""
    folder = checkout.folder
    changes = tree_changes.between(repo, old, new)
    in_the_way = untracked.in_the_way(folder, changes)
    if in_the_way:
        raise MergeRefusedError(
            f"the merge would overwrite uncommitted changes in {folder}, files git does not track: "
            f"{untracked.described(folder, in_the_way)} — move them elsewhere (or commit them), "
            "then approve again"
        )
    _follow(folder, old, new, dry_run=True)
    try:
        merge_journal.write(repo, Journal(folder, ref, old, new))
    except (OSError, JournalError) as error:
        raise MergeRefusedError(f"the merge journal cannot be written: {error}") from None
    try:
        _follow(folder, old, new)
    except MergeRefusedError:
        recover_interrupted(repo)  # the branch did not move: the checkout goes back where it was
        raise
    try:
        run(repo, "update-ref", "-m", f"ralph-desk: merge {commit}", ref, new, old)
    except GitError as error:
        done = recover_interrupted(repo)  # the merge's files go back: none is left staged on the base
        raise MergeRefusedError(
            f"{ref.removeprefix('refs/heads/')!r} could not be moved ({error.stderr.strip()}; a commit made "
            f"there meanwhile?): {done} — approve again"
        ) from None
    merge_journal.clear(repo)


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
