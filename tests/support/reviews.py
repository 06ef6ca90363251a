"""A project made a git repository, and tasks put in review by real sessions' commits on their branches."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ralph_desk.domain.enums import Recipe, TaskStatus, Verb
from ralph_desk.services.container import Services
from ralph_desk.vcs.worktrees import TaskWorktree
from tests.support.git_changes import git

__all__ = ["Edits", "make_git_project", "put_in_review", "run_session"]

Edits = Mapping[str, str | bytes | None]
"""Files a session writes (text or bytes) or deletes (None), by path in the worktree."""


def make_git_project(root: Path) -> None:
    """Make the project folder a git repository on `main` with everything committed."""
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "The project as it was")


def _write(folder: Path, edits: Edits) -> None:
    for name, content in edits.items():
        path = folder / name
        if content is None:
            path.unlink()
        elif isinstance(content, bytes):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content)


def run_session(services: Services, task_id: int, number: int, edits: Edits, summary: str) -> TaskWorktree:
    """One finished session of a task: it edits files in the task's worktree and its work is committed."""
    task = services.tasks.get(task_id)
    worktree = services.workspaces.prepare(task.id, task.title)
    assert worktree is not None, "the project is not a git repository"
    session_id = f"review-{task_id}-{number}"
    started = datetime.now(UTC) - timedelta(minutes=30 - number)
    before = services.workspaces.head(worktree)
    services.sessions.start_session(
        session_id, task.id, Recipe.TASK_EXECUTION, "claude", "sonnet", head_before=before, started_at=started
    )
    _write(worktree.path, edits)
    commit = services.workspaces.commit_session(worktree, task.title, session_id, "done", summary, True)
    services.sessions.finish_session(
        session_id, head_after=commit.after, outcome="done", closing_verb="done", changed_files=sorted(edits)
    )
    services.signals.record(task.id, session_id, Verb.DONE, summary=summary)
    return worktree


def put_in_review(services: Services, task_id: int, *sessions: tuple[Edits, str]) -> TaskWorktree:
    """Run these sessions (edits, summary) on a task, then put it in review as `done` does with the gate."""
    worktree: TaskWorktree | None = None
    for number, (edits, summary) in enumerate(sessions, start=1):
        worktree = run_session(services, task_id, number, edits, summary)
    assert worktree is not None, "a task in review has at least one session"
    services.tasks.set_status(task_id, TaskStatus.IN_REVIEW.value)
    return worktree
