"""The merge journal: a merge about to move a person's checkout says so on disk first, so that a process
killed between moving the checkout and moving the branch is put right by the next merge turn.

Written (and flushed to disk) in `.ralph/` before the checkout's index and files are touched, removed once
the base branch has moved. Recovery brings back in line with the commit the base branch points at only the
paths the journal's two commits differ on (an agent can write the file: a list of paths in it is never
trusted), and of those only a path whose index entry and file each still hold a blob of the merge's old or
new side: anything else there is the person's work, and recovery then touches nothing, keeps the journal
and says which paths to commit or stash.
"""

from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ralph_desk.vcs import checkout_paths, tree_changes
from ralph_desk.vcs.checkout_state import checked_out
from ralph_desk.vcs.refs import is_ancestor, rev
from ralph_desk.vcs.run import run
from ralph_desk.vcs.tree_changes import Change

log = logging.getLogger("ralph_desk.vcs")

JOURNAL = Path(".ralph") / "merge-journal.json"
_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)  # POSIX only
_DIRECTORY: int = getattr(os, "O_DIRECTORY", 0)  # POSIX only

SHOWN = 10

_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


class JournalError(RuntimeError):
    """A merge journal that cannot be written, read or acted on; the checkout is left as it is."""


@dataclass(frozen=True)
class Journal:
    """A checkout on its way from commit `old` to `new` (at the paths they differ on), while `ref` moves."""

    checkout: Path
    ref: str
    old: str
    new: str


def write(repo: Path, journal: Journal) -> None:
    """Put the journal on disk durably (written, flushed, renamed into place, its folder flushed)."""
    path = _path(repo)
    folder = path.parent
    if folder.is_symlink():
        raise JournalError(
            f"{folder} is a symbolic link; the merge journal is written inside the project only"
        )
    folder.mkdir(mode=0o700, exist_ok=True)
    record = {
        "checkout": str(journal.checkout),
        "ref": journal.ref,
        "old": journal.old,
        "new": journal.new,
    }
    draft = path.with_name(path.name + ".new")
    draft.unlink(missing_ok=True)
    descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(record, handle)  # ASCII only: a non-UTF-8 file name survives as an escaped surrogate
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(draft, path)
    _sync_folder(folder)


def clear(repo: Path) -> None:
    """Remove the journal (the merge it records is complete or undone)."""
    path = _path(repo)
    if os.path.lexists(path):
        path.unlink()
        _sync_folder(path.parent)


def read(repo: Path) -> Journal | None:
    """The journal a merge left, None when there is none; JournalError when it is not one of ours."""
    path = _path(repo)
    if not os.path.lexists(path):
        return None
    if path.is_symlink() or not path.is_file():
        raise JournalError(f"the merge journal {path} is not a plain file; look at it, then remove it")
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        journal = Journal(
            Path(record["checkout"]),
            str(record["ref"]),
            str(record["old"]),
            str(record["new"]),
        )
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise JournalError(
            f"the merge journal {path} cannot be read ({error}); look at it, then remove it"
        ) from None
    if not journal.ref.startswith("refs/heads/") or not all(
        _OID.fullmatch(oid) for oid in (journal.old, journal.new)
    ):
        raise JournalError(f"the merge journal {path} does not name a branch and two commits; remove it")
    return journal


def recover(repo: Path) -> str | None:
    """Put right a checkout a killed merge left half moved, and remove the journal; what was done, if any.

    JournalError, with the journal kept and nothing touched, when a path the merge moves holds something
    since that neither side of the merge has there (the person's work).
    """
    journal = read(repo)
    if journal is None:
        return None
    done = _put_right(repo, journal)
    clear(repo)
    log.warning("a merge interrupted midway was found: %s", done)
    return done


@dataclass(frozen=True)
class _Plan:
    """Paths to restore from the base, files the merge wrote to remove, and paths with the person's work."""

    restore: tuple[str, ...]
    remove: tuple[str, ...]
    in_the_way: tuple[str, ...]


def _put_right(repo: Path, journal: Journal) -> str:
    base = journal.ref.removeprefix("refs/heads/")
    checkout = checked_out(repo, base)
    if checkout is None or checkout.folder != journal.checkout:
        return f"{journal.checkout} no longer has {base!r} checked out; left as it is"
    _check_commits(repo, journal)
    target = rev(repo, journal.ref)
    if target is None:
        return f"{base!r} is gone; {journal.checkout} is left as it is"
    # The paths come from the journal's own commits, never from its text: a forged one can name no others.
    changes = tree_changes.between(repo, journal.old, journal.new)
    plan = _plan(checkout.folder, changes, _wanted(repo, journal, target, changes))
    if plan.in_the_way:
        raise JournalError(_in_the_way(repo, base, checkout.folder, plan.in_the_way))
    checkout.gitdir.joinpath("index.lock").unlink(missing_ok=True)  # left by the git killed in it
    _restore(checkout.folder, target, plan)
    count = len(plan.restore) + len(plan.remove)
    if target in (journal.old, journal.new):
        way = "rolled back to" if target == journal.old else "brought forward to"
        return f"the checkout {checkout.folder} was {way} {target} at {count} path(s) the merge moves"
    return (
        f"{base!r} moved on to {target} while the merge into it was interrupted; the checkout "
        f"{checkout.folder} was put back in line with it at {count} path(s) the merge had written"
    )


def _check_commits(repo: Path, journal: Journal) -> None:
    """A journal of ours names two commits of the repository, the new one made on top of the old."""
    if rev(repo, journal.old) != journal.old or rev(repo, journal.new) != journal.new:
        raise JournalError(f"the merge journal {_path(repo)} names commits the repository lacks; remove it")
    if not is_ancestor(repo, journal.old, journal.new):
        raise JournalError(
            f"the merge journal {_path(repo)} is not a merge's (its new commit is not made on its old); "
            "remove it"
        )


def _wanted(repo: Path, journal: Journal, target: str, changes: tuple[Change, ...]) -> dict[str, str | None]:
    """The blob the base branch (at `target`) has at each path the merge moves (None: none)."""
    if target == journal.new:
        return {change.path: change.new for change in changes}
    moved = (
        {}
        if target == journal.old
        else {change.path: change.new for change in tree_changes.between(repo, journal.old, target)}
    )
    return {change.path: moved.get(change.path, change.old) for change in changes}


def _plan(folder: Path, changes: tuple[Change, ...], wanted: dict[str, str | None]) -> _Plan:
    """Put right only paths whose index entry and file each hold a side's blob (or none where it has none)."""
    found = checkout_paths.held(folder, [change.path for change in changes])
    restore: list[str] = []
    remove: list[str] = []
    in_the_way: list[str] = []
    for change in changes:
        want, have, sides = wanted[change.path], found[change.path], {change.old, change.new}
        if have.index == want and (have.file == want or have.file not in sides):
            continue  # in line with the base; an uncommitted edit on top of it is the person's own
        if have.index not in sides or have.file not in sides:
            in_the_way.append(change.path)
        elif want is None and have.index is None:
            remove.append(change.path)  # written by a read-tree killed before it wrote the index
        else:
            restore.append(change.path)
    return _Plan(tuple(restore), tuple(remove), tuple(in_the_way))


def _restore(folder: Path, target: str, plan: _Plan) -> None:
    """Make the index and files at the plan's paths what `target` has there (absent where it has none)."""
    if plan.restore:
        run(
            folder,
            "--literal-pathspecs",
            "restore",
            f"--source={target}",
            "--staged",
            "--worktree",
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
            stdin="\0".join(plan.restore) + "\0",
        )
    for path in plan.remove:
        (folder / path).unlink(missing_ok=True)


def _in_the_way(repo: Path, base: str, folder: Path, paths: tuple[str, ...]) -> str:
    shown = ", ".join(paths[:SHOWN]) + (f" and {len(paths) - SHOWN} more" if len(paths) > SHOWN else "")
    return (
        f"a merge into {base!r} was interrupted, and {folder} has changes made since at paths it moves: "
        f"{shown}; nothing was touched. Commit or stash those changes there (or remove {_path(repo)} to "
        "leave the checkout as it is), then approve again"
    )


def _path(repo: Path) -> Path:
    return repo / JOURNAL


def _sync_folder(folder: Path) -> None:
    if not _DIRECTORY:  # Windows: a folder cannot be opened, nor synced, this way
        return
    descriptor = os.open(folder, os.O_RDONLY | _DIRECTORY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
