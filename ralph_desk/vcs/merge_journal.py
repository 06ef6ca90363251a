"""The merge journal: a merge about to move a person's checkout says so on disk first, so that a process
killed between moving the checkout and moving the branch is put right by the next merge turn.

Written (and flushed to disk) in `.ralph/` before the checkout's index and files are touched, removed once
the base branch has moved. Recovery brings only the journal's paths back in line with the commit the base
branch points at: rolled back while it is still the old commit, forward when it is the new one. The person's
other uncommitted work is never touched.
"""

from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from ralph_desk.vcs.checkout_state import checked_out
from ralph_desk.vcs.run import GitError, rev, run
from ralph_desk.vcs.tree_changes import Change

log = logging.getLogger("ralph_desk.vcs")

JOURNAL = Path(".ralph") / "merge-journal.json"

_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


class JournalError(RuntimeError):
    """A merge journal that cannot be written, read or acted on; the checkout is left as it is."""


@dataclass(frozen=True)
class Journal:
    """A checkout on its way from `old` to `new` at the paths of `changes`, while `ref` moves."""

    checkout: Path
    ref: str
    old: str
    new: str
    changes: tuple[Change, ...]


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
        "changes": [asdict(change) for change in journal.changes],
    }
    draft = path.with_name(path.name + ".new")
    draft.unlink(missing_ok=True)
    descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
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
            tuple(_change(item) for item in record["changes"]),
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
    """Put right a checkout a killed merge left half moved, and remove the journal; what was done, if any."""
    journal = read(repo)
    if journal is None:
        return None
    done = _put_right(repo, journal)
    clear(repo)
    log.warning("a merge interrupted midway was found: %s", done)
    return done


def _put_right(repo: Path, journal: Journal) -> str:
    base = journal.ref.removeprefix("refs/heads/")
    checkout = checked_out(repo, base)
    if checkout is None or checkout.folder != journal.checkout:
        return f"{journal.checkout} no longer has {base!r} checked out; left as it is"
    checkout.gitdir.joinpath("index.lock").unlink(missing_ok=True)  # left by the git killed in it
    target = rev(repo, journal.ref)
    if target not in (journal.old, journal.new):
        return (
            f"{base!r} moved on since the merge into it was interrupted; {journal.checkout} is left as it is "
            "(`git status` there shows what it holds)"
        )
    _restore(checkout.folder, journal, target)
    way = "rolled back to" if target == journal.old else "brought forward to"
    return f"the checkout {checkout.folder} was {way} {target} at the {len(journal.changes)} path(s) merged"


def _restore(folder: Path, journal: Journal, target: str) -> None:
    """Make the index and files at the journal's paths what `target` has there (absent where it has none)."""
    at_old = target == journal.old
    present = [change.path for change in journal.changes if (change.old if at_old else change.new)]
    absent = [change for change in journal.changes if not (change.old if at_old else change.new)]
    tracked = set(run(folder, "ls-files", "-z", "--cached").stdout.split("\0")) if absent else set()
    known = present + [change.path for change in absent if change.path in tracked]
    if known:
        run(
            folder,
            "--literal-pathspecs",
            "restore",
            f"--source={target}",
            "--staged",
            "--worktree",
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
            stdin="\0".join(known) + "\0",
        )
    for change in absent:
        if change.path not in tracked:  # written by a read-tree killed before it wrote the index
            _remove_written(folder, change.path, change.new if at_old else change.old)


def _remove_written(folder: Path, path: str, written: str | None) -> None:
    """Remove the file at `path` when it holds exactly the blob `written` (the merge's, nobody else's)."""
    place = folder / path
    if any(
        part.is_symlink()
        for part in (place, *place.parents)
        if part.is_relative_to(folder) and part != folder
    ):
        return  # never through a link: what it leads to is not the merge's
    if not place.is_file():
        return
    try:
        found = run(folder, "hash-object", "--", path).stdout.strip()
    except GitError:
        return
    if found == written:
        place.unlink()


def _change(item: object) -> Change:
    if not isinstance(item, dict):
        raise TypeError("a change is not a record")
    path, old, new = item["path"], item["old"], item["new"]
    if not isinstance(path, str) or not path or path.startswith("/") or ".." in path.split("/"):
        raise ValueError(f"the path {path!r} is not one inside the checkout")
    for oid in (old, new):
        if oid is not None and not (isinstance(oid, str) and _OID.fullmatch(oid)):
            raise ValueError(f"{oid!r} is not an object id")
    return Change(path, old, new)


def _path(repo: Path) -> Path:
    return repo / JOURNAL


def _sync_folder(folder: Path) -> None:
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
