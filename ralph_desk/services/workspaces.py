"""Where a task's sessions work in a git project: its worktree and branch, and a commit per session.

A project outside git (or in a repository without a commit, or whose base branch is gone) has no
workspaces: its sessions run in the project folder as before, and no gate applies.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ralph_desk.project import ProjectPaths, contained
from ralph_desk.project.config import ProjectConfig, read_config
from ralph_desk.project.errors import ProjectError
from ralph_desk.vcs import commits, initialise, worktree_git, worktrees
from ralph_desk.vcs.run import GitError, current_branch, is_repository, rev
from ralph_desk.vcs.worktrees import TaskWorktree

log = logging.getLogger("ralph_desk.vcs")


@dataclass(frozen=True)
class SessionCommit:
    """The task branch before and after one session's commit (equal when it changed nothing)."""

    before: str | None
    after: str | None
    stashed: bool = False
    head_was: str | None = None  # where the agent had moved the worktree's HEAD (now back on the task ref)
    left_out: tuple[str, ...] = ()  # nested repositories kept out of the commit


class WorkspaceService:
    """The git side of a project: is it one, which base branch, and each task's worktree."""

    def __init__(self, paths: ProjectPaths) -> None:
        self.paths = paths

    @property
    def root(self) -> Path:
        return self.paths.root

    @property
    def worktrees_dir(self) -> Path:
        """`.ralph/worktrees`, refused (`LinkRefusedError`) when it or `.ralph/` is a link: git would make,
        and `repair` remove, folders wherever the link points."""
        return contained.checked(self.root, self.paths.worktrees_dir)

    def config(self) -> ProjectConfig:
        """The project's settings (defaults when config.json cannot be read)."""
        try:
            return read_config(self.paths)
        except ProjectError:
            return ProjectConfig()

    def is_git(self) -> bool:
        """Whether the project folder is a git work tree with at least one commit."""
        return is_repository(self.root)

    def make_repository(self) -> str:
        """Make the plain project folder a git repository with a first commit; the branch checked out."""
        return initialise.make_repository(self.root)

    def base_branch(self) -> str | None:
        """The branch tasks start from and merge into: config `base_branch`, else the one checked out.

        None outside git, in a repository without a commit, or when the branch does not exist.
        """
        try:
            base = self.config().base_branch or current_branch(self.root)
            return base if base is not None and rev(self.root, f"refs/heads/{base}") is not None else None
        except GitError:
            return None

    def existing(self, task_id: int) -> TaskWorktree | None:
        """A task's branch and worktree path if it has a branch (nothing is made)."""
        base = self.base_branch()
        if base is None:
            return None
        branch = worktrees.find_branch(self.root, task_id)
        if branch is None:
            return None
        path = worktrees.checkouts(self.root).get(branch)
        return TaskWorktree(task_id, path or self.worktrees_dir / branch.removeprefix("ralph/"), branch, base)

    def prepare(self, task_id: int, title: str) -> TaskWorktree | None:
        """The task's worktree, made or repaired; None outside git (the session works in the project)."""
        base = self.base_branch()
        if base is None:
            return None
        return worktrees.ensure(self.root, self.worktrees_dir, task_id, title, base)

    def commit_session(
        self,
        worktree: TaskWorktree,
        title: str,
        session_id: str,
        verb: str | None,
        summary: str | None,
        allowed: bool,
    ) -> SessionCommit:
        """Commit what the session left on the task branch, or (edits not allowed) put it aside in a stash.

        Only the task's ref moves; WorktreeIntegrityError (nothing committed) when the worktree's `.git` no
        longer points at the repository that made it, or its branch is gone.
        """
        checkout = worktree_git.checkout_of(self.root, worktree.path)
        ref = f"refs/heads/{worktree.branch}"
        if not allowed:
            note = f"ralph-desk: session {session_id} made edits while edits were not allowed"
            stashed, head_was = commits.stash_all(checkout, ref, note)
            tip = commits.tip_of(checkout, ref)
            return SessionCommit(tip, tip, stashed, head_was)
        text = commits.message(worktree.task_id, title, verb, summary, session_id)
        made = commits.commit_to(checkout, ref, text)
        return SessionCommit(made.before, made.after, False, made.head_was, made.left_out)

    def catch_up(self, worktree: TaskWorktree) -> tuple[str, ...]:
        """Bring the task branch up to date with its base; the files left with conflict markers."""
        checkout = worktree_git.checkout_of(self.root, worktree.path)
        return commits.catch_up(checkout, f"refs/heads/{worktree.branch}", worktree.base)

    def head(self, worktree: TaskWorktree) -> str | None:
        """The commit the task branch stands on."""
        return rev(self.root, f"refs/heads/{worktree.branch}")

    def remove(self, task_id: int) -> tuple[str, ...]:
        """Remove a task's worktree and branch (merged or discarded work); what kept them."""
        if self.is_git():
            return worktrees.remove(self.root, self.worktrees_dir, task_id)
        return ()

    def retire(self, task_id: int) -> str | None:
        """Remove a deleted task's worktree, and its branch unless it holds unmerged work; what was done."""
        base = self.base_branch()
        if base is None:
            return None
        return _told(worktrees.retire(self.root, self.worktrees_dir, task_id, base), base)

    def sweep(self, owned: Callable[[], set[int]]) -> list[str]:
        """Retire the worktrees no task in `owned()` owns, remove folders git does not know; what was done."""
        base = self.base_branch()
        if base is None:
            return []
        try:
            swept = worktrees.sweep(self.root, self.worktrees_dir, owned, base)
        except (GitError, ProjectError, OSError):
            log.warning("could not clean the worktrees of %s", self.root, exc_info=True)
            return []
        return [told for retired in swept if (told := _told(retired, base))]


def _told(retired: worktrees.Retired, base: str) -> str | None:
    """One sentence on a retired worktree: its branch removed, or kept because it holds unmerged work."""
    if retired.branch is None:
        return f"removed the stale worktree folder {retired.folder}" if retired.folder else None
    if retired.nested:
        return (
            f"kept the worktree {retired.folder} and the branch {retired.branch}: it holds repositories "
            f"of their own that no commit holds ({', '.join(retired.nested)}); move them out, then retire it "
            "again"
        )
    if retired.branch_kept:
        return (
            f"kept the branch {retired.branch}: it holds work not on {base} "
            f"(merge it, or `git branch -D {retired.branch}` to drop it)"
        )
    return f"removed the branch {retired.branch} (all its work is on {base})"
