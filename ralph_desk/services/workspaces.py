"""Where a task's sessions work in a git project: its worktree and branch, and a commit per session.

A project outside git (or in a repository without a commit) has no workspaces: its sessions run in the
project folder as before, and no gate applies. A git project whose base branch is not there has none
either, and runs no task (`base_problem` says why): never in the person's own checkout.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path

from ralph_desk.domain.branches import DISCARD_RETENTION, HEADS, Discarded, TaskBranch, is_task_ref
from ralph_desk.domain.enums import TaskStatus
from ralph_desk.domain.timestamps import utc
from ralph_desk.project import ProjectPaths, contained
from ralph_desk.project.config import ProjectConfig, read_config
from ralph_desk.project.errors import ProjectError
from ralph_desk.services.errors import ServiceError
from ralph_desk.services.sessions import this_host
from ralph_desk.store import branches
from ralph_desk.store.database import Database, UnitOfWork
from ralph_desk.store.errors import StoreError
from ralph_desk.vcs import (
    bases,
    commits,
    discarded,
    initialise,
    soundness,
    untracked,
    worktree_git,
    worktrees,
)
from ralph_desk.vcs.places import Checkout, GitError
from ralph_desk.vcs.refs import is_repository, rev
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


class NoBaseBranchError(ProjectError):
    """A git project whose base branch is not there: its tasks would have no branch to start from."""


class WorkspaceService:
    """The git side of a project: is it one, which base branch, and each task's worktree."""

    def __init__(self, paths: ProjectPaths, db: Database) -> None:
        self.paths = paths
        self.db = db
        self._adopted = False

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

        None outside git, in a repository without a commit, or when there is no such branch (`base_problem`).
        """
        return bases.base_of(self.root, self.config().base_branch).branch

    def base_problem(self) -> str | None:
        """Why a git project has no base branch (a misspelt `base_branch`, a detached HEAD), with the fix."""
        return bases.base_of(self.root, self.config().base_branch).problem

    def require_base(self) -> None:
        """Raise `NoBaseBranchError` when a git project has no base branch: no task may run then."""
        problem = self.base_problem()
        if problem is not None:
            raise NoBaseBranchError(problem)

    @cached_property
    def checkout(self) -> str:
        """This checkout among the processes sharing the database: its host and folder."""
        return f"{this_host()}:{self.root.resolve()}"

    def branch_of(self, task_id: int) -> TaskBranch | None:
        """The branch the records give this very task here (never one found by its name); None when the
        recorded value is not a task branch ref (it is never handed to git)."""
        self._adopt_once()
        with self.db.read() as unit:
            held = branches.of_task(unit, self.checkout, task_id)
        if held is not None and not is_task_ref(held.ref):
            log.warning("task #%s: its recorded branch %r is not a task branch ref", task_id, held.ref)
            return None
        return held

    def existing(self, task_id: int) -> TaskWorktree | None:
        """A task's branch and worktree path if it has a branch (nothing is made)."""
        base = self.base_branch()
        if base is None:
            return None
        held = self.branch_of(task_id)
        if held is None or rev(self.root, held.ref) is None:
            return None
        path = worktrees.checkouts(self.root).get(held.branch)
        return TaskWorktree(
            task_id, path or self.worktrees_dir / worktrees.folder_name(held.ref), held.branch, base
        )

    def checked_folder(self, task_id: int) -> tuple[Path, str | None]:
        """Where a task's checks run again, and the commit they check: its worktree and branch tip in git, the
        project folder outside git; `ServiceError` when a git task has no worktree here."""
        if not self.is_git():
            return self.root, None
        held = self.existing(task_id)
        if held is None or not held.path.is_dir():
            raise ServiceError(
                f"task #{task_id} has no worktree here to check: it has not started, or its work was merged "
                f"or discarded"
            )
        return held.path, self.head(held)

    def prepare(self, task_id: int, title: str) -> TaskWorktree | None:
        """The task's worktree, made or repaired; None outside git (the session works in the project).

        A task without a branch gets a new one from the base, under a name no branch has yet."""
        base = self.base_branch()
        if base is None:
            return None
        worktrees_dir = self.worktrees_dir
        held = self.branch_of(task_id)
        if held is not None and rev(self.root, held.ref) is not None:
            return worktrees.ensure(self.root, worktrees_dir, task_id, held.ref, base)
        return self._new_branch(task_id, title, HEADS + base, base, held)

    def _new_branch(
        self, task_id: int, title: str, start: str, base: str, held: TaskBranch | None
    ) -> TaskWorktree:
        """A new task branch at the commit the full ref `start` is on, recorded as the task's (instead of
        `held`, a record whose branch is gone), with its worktree."""
        with self.db.write() as unit:
            if held is not None:  # the person deleted it: the task starts again from `start`
                branches.forget(unit, self.checkout, held.ref)
            taken = {branch.ref for branch in branches.in_checkout(unit, self.checkout)}
        worktrees_dir = self.worktrees_dir
        ref = worktrees.free_ref(self.root, worktrees_dir, task_id, title, taken)
        made = worktrees.create(self.root, ref, start)
        try:
            with self.db.write() as unit:
                branches.record(unit, self.checkout, task_id, ref)
        except StoreError:
            worktrees.delete_ref(self.root, ref, made)
            raise
        return worktrees.ensure(self.root, worktrees_dir, task_id, ref, base)

    def ignored(self, worktree: TaskWorktree, paths: Sequence[str]) -> set[str]:
        """Which of `paths` git ignores in the task's worktree (read through the git folder the desk made)."""
        return untracked.ignored(self.git_of(worktree), paths)

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
        checkout = self.git_of(worktree)
        ref = worktree.ref
        if not allowed:
            note = f"ralph-desk: session {session_id} made edits while edits were not allowed"
            stashed, head_was = commits.stash_all(checkout, ref, note)
            tip = commits.tip_of(checkout, ref)
            return SessionCommit(tip, tip, stashed, head_was)
        text = commits.message(worktree.task_id, title, verb, summary, session_id)
        made = commits.commit_to(checkout, ref, text)
        return SessionCommit(made.before, made.after, False, made.head_was, made.left_out)

    def git_of(self, worktree: TaskWorktree) -> Checkout:
        """The task's worktree reached through the git folder the desk made (`WorktreeIntegrityError` when
        its `.git` no longer points there)."""
        return worktree_git.checkout_of(self.root, worktree.path)

    def catch_up(self, worktree: TaskWorktree) -> tuple[str, ...]:
        """Bring the task branch up to date with its base; the files left with conflict markers."""
        checkout = self.git_of(worktree)
        return commits.catch_up(checkout, worktree.ref, worktree.base)

    def damage(self, worktree: TaskWorktree) -> str | None:
        """What became of a task's worktree under its agent (deleted, its `.git` broken); None when sound."""
        try:
            return soundness.damage(self.root, worktree.path)
        except GitError as error:
            return f"could not be checked ({error})"

    def head(self, worktree: TaskWorktree) -> str | None:
        """The commit the task branch stands on."""
        return rev(self.root, worktree.ref)

    def remove(self, task_id: int) -> tuple[str, ...]:
        """Remove a task's worktree and branch (merged or discarded work), only the branch recorded as its;
        the nested repositories that kept them (none when both went)."""
        if not self.is_git():
            return ()
        held = self.branch_of(task_id)
        if held is None:
            return ()
        removed = worktrees.remove(self.root, self.worktrees_dir, held.ref)
        if removed.ref_gone:
            with self.db.write() as unit:
                branches.forget(unit, self.checkout, held.ref)
        return removed.nested

    def discard(self, task_id: int, status: TaskStatus, now: datetime | None = None) -> Discarded | None:
        """Keep a task's branch tip under `refs/ralph/discarded/…` (pruning those past the retention), then
        remove its worktree and branch; the ref kept (None: the task had no branch)."""
        held = self.branch_of(task_id) if self.is_git() else None
        tip = rev(self.root, held.ref) if held is not None else None
        if tip is None:
            self.remove(task_id)
            return None
        moment = now or datetime.now(UTC)
        kept = Discarded.named(task_id, moment, status)
        discarded.keep(self.root, tip, kept)
        for old in discarded.prune(self.root, moment - DISCARD_RETENTION):
            log.info("pruned the discarded work of task #%s kept since %s", old.task_id, old.at)
        self.remove(task_id)
        return kept

    def discarded(self, task_id: int, since: datetime) -> Discarded | None:
        """The newest discarded branch kept for task `task_id` since `since` (its creation: an earlier task
        with the same id is not it)."""
        if not self.is_git():
            return None
        found = [item for item in discarded.kept(self.root, task_id) if item.at >= utc(since)]
        return found[0] if found else None

    def restore(self, task_id: int, title: str, kept: Discarded) -> TaskWorktree:
        """Make the task a new branch (and worktree) at the discarded work `kept`, then drop the kept ref."""
        base = self.base_branch()
        if base is None:
            raise ServiceError(self.base_problem() or "the project has no base branch to restore work onto")
        if self.existing(task_id) is not None:
            raise ServiceError(
                f"task #{task_id} has a branch again (it started anew); its discarded work stays kept as "
                f"{kept.ref}"
            )
        worktree = self._new_branch(task_id, title, kept.ref, base, self.branch_of(task_id))
        discarded.drop(self.root, kept)
        return worktree

    def retire(self, held: TaskBranch | None) -> str | None:
        """Remove a deleted task's worktree (`held`, read before the deletion), and its branch unless it
        holds unmerged work; what was done."""
        base = self.base_branch()
        if base is None or held is None:
            return None
        retired = worktrees.retire(self.root, self.worktrees_dir, held.task_id, held.ref, base)
        if not retired.branch_kept:
            with self.db.write() as unit:
                branches.forget(unit, self.checkout, held.ref)
        return _told(retired, base)

    def sweep(self, owned: Callable[[], set[int]]) -> list[str]:
        """Retire the worktrees the records give to tasks not in `owned()`, remove folders git does not know;
        what was done. A worktree of another project in the same repository is never touched."""
        base = self.base_branch()
        if base is None:
            return []
        try:
            self._adopt_once()
            swept = worktrees.sweep(self.root, self.worktrees_dir, lambda: self._claims(owned()), base)
            self._forget_gone()
        except (GitError, ProjectError, OSError):
            log.warning("could not clean the worktrees of %s", self.root, exc_info=True)
            return []
        return [told for retired in swept if (told := _told(retired, base))]

    def _record_adopted(self, unit: UnitOfWork, found: dict[int, str]) -> None:
        """Record the adopted branches that no record took meanwhile."""
        held = {branch.ref for branch in branches.in_checkout(unit, self.checkout)}
        for task_id, ref in found.items():
            if ref not in held and branches.of_task(unit, self.checkout, task_id) is None:
                branches.record(unit, self.checkout, task_id, ref)
                log.info(
                    "adopted the branch %s of task #%s (made before branches were recorded)", ref, task_id
                )

    def _claims(self, live_ids: set[int]) -> worktrees.Claims:
        """The recorded branches here: those of tasks in `live_ids`, and those of every other (gone) task."""
        with self.db.read() as unit:
            held = branches.in_checkout(unit, self.checkout)
        live = frozenset(branch.ref for branch in held if branch.alive and branch.task_id in live_ids)
        return worktrees.Claims(
            live, {branch.ref: branch.task_id for branch in held if branch.ref not in live}
        )

    def _forget_gone(self) -> None:
        """Drop the records of gone tasks whose branches are no longer in the repository."""
        present = set(worktrees.task_refs(self.root))
        with self.db.write() as unit:
            for branch in branches.in_checkout(unit, self.checkout):
                if not branch.alive and branch.ref not in present:
                    branches.forget(unit, self.checkout, branch.ref)

    def _adopt_once(self) -> None:
        """Record, once per checkout, the branches an older ralph-desk made for tasks still open.

        A branch is adopted only for a task that has no record, when its name has the task's id, it holds
        the commit of the task's newest session, no record holds it, no other checkout or project has it
        checked out, and no other branch of that task fits as well. Anything else stays unrecorded."""
        base = self.base_branch() if not self._adopted else None
        if self._adopted or base is None:
            return
        with self.db.read() as unit:
            if branches.adopted(unit, self.checkout):
                self._adopted = True
                return
            waiting = branches.unrecorded(unit, self.checkout)
            held = {branch.ref for branch in branches.in_checkout(unit, self.checkout)}
        found: dict[int, str] = {}
        if waiting:
            refs = worktrees.task_refs(self.root)
            worktrees_dir = self.worktrees_dir
            for task in waiting:
                taken = held | set(found.values())
                ref = worktrees.legacy_branch(
                    self.root, worktrees_dir, task.task_id, task.commit, refs, taken, HEADS + base
                )
                if ref is not None:
                    found[task.task_id] = ref
        try:
            with self.db.write() as unit:
                if branches.mark_adopted(unit, self.checkout):
                    self._record_adopted(unit, found)
        except StoreError:  # a read-only database: the next process that can write adopts them
            log.warning("could not record the task branches of %s", self.root, exc_info=True)
        self._adopted = True


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
