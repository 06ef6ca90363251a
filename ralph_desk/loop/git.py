"""Git facts per session: HEAD, the files a session changed, and putting unwanted edits aside (never lost).

Outside a repository the state is a snapshot of the file tree instead (`filetree`), so that the
files a session changed are known there too.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ralph_desk.loop import filetree
from ralph_desk.services.sessions import MAX_CHANGED_FILES
from ralph_desk.vcs.run import Checkout, GitError, Where, run

Place = Where
"""Where the desk's git reads a session's work: a folder, or a task worktree through its git folder."""


def folder_of(repo: Where) -> Path:
    """The folder whose files `repo` names (a task worktree: its own, reached through its git folder)."""
    return repo.work_tree if isinstance(repo, Checkout) else repo


@dataclass(frozen=True)
class GitState:
    """The repository before or after a session."""

    head: str | None
    dirty: frozenset[str]
    contents: tuple[tuple[str, str], ...] = ()
    files: filetree.Snapshot | None = None  # outside a repository: the file tree's snapshot

    def content_of(self, path: str) -> str | None:
        """The blob hash of a dirty path when the state was taken ('' for a deleted file)."""
        return dict(self.contents).get(path)


def _git(repo: Where, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """`git args` through the one git runner (any exit code: the caller reads it); no optional locks."""
    return run(repo, "--no-optional-locks", *args, stdin=stdin, ok_codes=None)


def is_repository(repo: Where) -> bool:
    """Whether `repo` is inside a git work tree."""
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


def _dirty(repo: Where) -> frozenset[str]:
    entries = status_entries(status(repo))
    return frozenset(path for _, path, _ in entries if not path.startswith(".ralph/"))


def state(repo: Where) -> GitState:
    """HEAD and the uncommitted paths (outside `.ralph/`); outside a repository, the file tree's snapshot."""
    if not is_repository(repo):
        return GitState(None, frozenset(), files=filetree.snapshot(folder_of(repo)))
    head = _git(repo, "rev-parse", "HEAD")
    dirty = _dirty(repo)
    return GitState(head.stdout.strip() if head.returncode == 0 else None, dirty, _hashes(repo, dirty))


def _hashes(repo: Where, paths: frozenset[str]) -> tuple[tuple[str, str], ...]:
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


def changed_files(repo: Where, before: GitState, after: GitState) -> list[str]:
    """Files a session touched: committed after `before.head` or newly dirty (outside git: changed)."""
    if before.files is not None and after.files is not None:
        return filetree.changed(before.files, after.files)
    changed: set[str] = set(after.dirty - before.dirty)
    if before.head and after.head and before.head != after.head:
        diff = _git(repo, "diff", "--name-only", "-z", before.head, after.head)
        changed.update(path for path in diff.stdout.split("\0") if path and not path.startswith(".ralph/"))
    changed.update(
        path for path in after.dirty & before.dirty if after.content_of(path) != before.content_of(path)
    )
    return sorted(changed)


def recordable(paths: Sequence[str]) -> list[str]:
    """The changed paths as a session record keeps them: at most `MAX_CHANGED_FILES`, each as text UTF-8 can
    store (a byte of a name that is not UTF-8 written `\\xNN`)."""
    return [
        path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        for path in paths[:MAX_CHANGED_FILES]
    ]


def stash_changes(repo: Where, message: str, paths: Sequence[str] | None = None) -> bool:
    """Put every uncommitted change (or those of `paths`; untracked files too) aside under `message`.

    True if anything was put aside.
    """
    dirty = state(repo).dirty
    chosen = [path for path in paths if path in dirty] if paths is not None else None
    if not dirty or chosen == []:
        return False
    # Literal pathspecs: a file named like a glob is that file only.
    specs = [f":(literal){path}" for path in chosen] if chosen else [".", ":(exclude).ralph"]
    result = _git(repo, "stash", "push", "--include-untracked", "-m", message, "--", *specs)
    return result.returncode == 0


def stash_list(repo: Where) -> list[str]:
    """The messages of the stash entries, newest first."""
    result = _git(repo, "stash", "list", "--format=%s")
    return [line for line in result.stdout.splitlines() if line]
