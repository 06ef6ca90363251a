"""A merge tried before the base moves: the planned commit checked out where no one works, and the tasks
merged into the base since a branch left it.

The trial worktree is the desk's own (`.ralph/worktrees/merge-trial`, detached, made by the repository's
git with the lockdown settings); one merge turn at a time uses it, and whatever a killed process left there
is removed before the next trial is made.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ralph_desk.vcs import untracked, worktree_git
from ralph_desk.vcs.names import object_id
from ralph_desk.vcs.run import run
from ralph_desk.vcs.worktrees import discard_folder

FOLDER = "merge-trial"
"""The trial's folder under the worktrees (a task's is `<id>-<slug>`: never this)."""
COMMITS_READ = 500
_TASK_ID = re.compile(r"\s*([1-9][0-9]{0,9})\s*")


@contextmanager
def checked_out(repo: Path, worktrees_dir: Path, commit: str) -> Iterator[Path]:
    """The files of `commit` (a full object id) in a detached worktree of their own, removed afterwards."""
    commit = object_id(commit)
    path = worktrees_dir / FOLDER
    discard_folder(repo, path)
    worktrees_dir.mkdir(parents=True, exist_ok=True)
    try:
        run(repo, "worktree", "add", "--quiet", "--detach", str(path), commit)
        yield path
    finally:
        discard_folder(repo, path)


def ignored(repo: Path, folder: Path, paths: list[str]) -> set[str]:
    """Which of `paths` git ignores in the trial at `folder` (reached through the repository that made it)."""
    return untracked.ignored(worktree_git.checkout_of(repo, folder), paths)


def tasks_merged(repo: Path, branch_tip: str, base: str) -> tuple[int, ...]:
    """The task ids the `Ralph-Task:` trailers name on the base's commits the branch does not have, newest
    first (commit messages are the agents' text: only whole numbers are read from them)."""
    listing = run(
        repo,
        "log",
        "--format=%(trailers:key=Ralph-Task,valueonly,separator=%x00)%x00",
        f"--max-count={COMMITS_READ}",
        "--end-of-options",
        object_id(base),
        f"^{object_id(branch_tip)}",
    ).stdout
    found = (_TASK_ID.fullmatch(value) for value in listing.split("\0"))
    return tuple(dict.fromkeys(int(match.group(1)) for match in found if match))
