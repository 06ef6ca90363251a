"""Deleting a task takes its worktree and branch along, never its unmerged work; stale worktrees go too."""

from __future__ import annotations

import logging

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.project.errors import ProjectError
from ralph_desk.services.tasks import TaskService
from ralph_desk.services.workspaces import WorkspaceService
from ralph_desk.vcs.places import GitError

log = logging.getLogger("ralph_desk.vcs")


class RetiringService:
    """Remove the worktrees (and, when all their work is on the base, the branches) of tasks that are gone."""

    def __init__(self, tasks: TaskService, workspaces: WorkspaceService) -> None:
        self.tasks = tasks
        self.workspaces = workspaces

    def delete_task(self, task_id: int) -> str | None:
        """Delete a task (refused while others depend on it), then retire its worktree; what became of it."""
        try:  # read first: once the task is gone, no record is its
            held = self.workspaces.branch_of(task_id)
        except (GitError, ProjectError):
            log.warning("could not read the branch of task #%s", task_id, exc_info=True)
            held = None
        self.tasks.delete(task_id)
        try:
            return self.workspaces.retire(held)
        except (GitError, ProjectError) as error:
            log.warning("could not remove the worktree of deleted task #%s", task_id, exc_info=True)
            return f"its worktree could not be removed ({error}); the next loop start tries again"

    def sweep(self) -> list[str]:
        """Retire the worktrees of tasks deleted or merged (a crash between), and folders git forgot."""
        return self.workspaces.sweep(self._owners)

    def _owners(self) -> set[int]:
        """The tasks that may own a worktree: every one not merged, and every one whose row does not read."""
        tasks = self.tasks.list()
        unread = {error.id for error in tasks.errors if isinstance(error.id, int)}
        return unread | {task.id for task in tasks if task.status is not TaskStatus.DONE}
