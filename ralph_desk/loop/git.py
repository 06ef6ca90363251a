"""A session's work as the loop sees it: git's facts in a repository, a file-tree snapshot outside one.

Git itself runs in `vcs.work_state`; this module chooses between it and `filetree`, and keeps the
changed paths as a session record may hold them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ralph_desk.loop import filetree
from ralph_desk.services.inputs import MAX_CHANGED_FILES
from ralph_desk.vcs import work_state
from ralph_desk.vcs.places import Where

Place = Where
"""Where the desk's git reads a session's work: a folder, or a task worktree through its git folder."""


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


def state(repo: Where) -> GitState:
    """HEAD and the uncommitted paths (outside `.ralph/`); outside a repository, the file tree's snapshot."""
    if not work_state.is_work_tree(repo):
        return GitState(None, frozenset(), files=filetree.snapshot(work_state.folder_of(repo)))
    dirty = work_state.dirty_paths(repo)
    return GitState(work_state.head(repo), dirty, work_state.blob_hashes(repo, dirty))


def changed_files(repo: Where, before: GitState, after: GitState) -> list[str]:
    """Files a session touched: committed after `before.head` or newly dirty (outside git: changed)."""
    if before.files is not None and after.files is not None:
        return filetree.changed(before.files, after.files)
    changed: set[str] = set(after.dirty - before.dirty)
    if before.head and after.head and before.head != after.head:
        changed.update(work_state.committed_between(repo, before.head, after.head))
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
    """Put a session's unwanted edits aside under `message`; outside a repository there is no stash."""
    return work_state.is_work_tree(repo) and work_state.stash_changes(repo, message, paths)
