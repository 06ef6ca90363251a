"""Discarded task branches kept as refs (`refs/ralph/discarded/<id>-<time>-<status>`) for a while, so that a
discard can be taken back: made with an expected old value, found by their parsed names, pruned by age."""

from __future__ import annotations

from datetime import datetime

from ralph_desk.domain.branches import DISCARDED_REFS, Discarded
from ralph_desk.vcs.places import GitError, Where
from ralph_desk.vcs.refs import rev
from ralph_desk.vcs.run import out, run


def keep(repo: Where, commit: str, kept: Discarded) -> None:
    """Keep `commit` (an object id) under `kept.ref`, which must not exist yet (GitError when it does)."""
    _check(kept.ref)
    zero = "0" * len(commit)
    run(repo, "update-ref", "-m", "ralph-desk: discarded", "--end-of-options", kept.ref, commit, zero)


def kept(repo: Where, task_id: int | None = None) -> list[Discarded]:
    """The discarded branches kept (of one task, or all), newest first; refs of other shapes are ignored."""
    listing = out(repo, "for-each-ref", "--format=%(refname)", DISCARDED_REFS)
    found = [parsed for ref in listing.splitlines() if (parsed := Discarded.parse(ref)) is not None]
    mine = [item for item in found if task_id is None or item.task_id == task_id]
    return sorted(mine, key=lambda item: item.at, reverse=True)


def drop(repo: Where, kept_ref: Discarded) -> None:
    """Delete a kept ref at the commit it is on now (nothing when it is gone already)."""
    _check(kept_ref.ref)
    tip = rev(repo, kept_ref.ref)
    if tip is not None:
        run(repo, "update-ref", "-d", "--end-of-options", kept_ref.ref, tip)


def prune(repo: Where, before: datetime) -> list[Discarded]:
    """Delete the kept refs discarded before `before` (aware UTC); those deleted."""
    old = [item for item in kept(repo) if item.at < before]
    for item in old:
        drop(repo, item)
    return old


def _check(ref: str) -> None:
    """Refuse a ref that is not one this module makes (a name is never handed to git unchecked)."""
    if Discarded.parse(ref) is None:
        raise GitError(("update-ref", ref), 2, f"{ref!r} is not a discarded task branch ref")
