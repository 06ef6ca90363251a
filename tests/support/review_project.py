"""A project that is a git repository with everything committed, open, with a feature and a discipline."""

from __future__ import annotations

from pathlib import Path

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.domain.records import Task
from ralph_desk.project import init_project
from ralph_desk.services.container import Services
from tests.support.git_repo import commit_all, make_repo

__all__ = ["open_review_project", "read_tip", "task_in_review"]


def open_review_project(root: Path, files: dict[str, str], title: str) -> Services:
    """A repository holding `files`, made a project and committed; its services (feature `core`, discipline
    `backend`), for tasks whose work goes through review. The caller closes them."""
    make_repo(root, files)
    paths = init_project(root, title=title)
    commit_all(root, "ralph-desk project")
    services = Services.open(paths)
    services.features.create("core", "Core")
    services.disciplines.create("backend", "Backend", "server", "#336699")
    return services


def read_tip(services: Services, task_id: int) -> str | None:
    """Read a task's whole diff as a person does; the commit it shows (what approving it merges)."""
    pinned = services.reviews.diff(task_id).pin
    return pinned.tip if pinned is not None else None


def task_in_review(services: Services, title: str, edits: dict[str, str], summary: str) -> Task:
    """A task of `core`/`backend` whose session `s-<id>` edited files in its worktree, committed them and
    called done: now in review."""
    task = services.tasks.create("core", "backend", title)
    session = f"s-{task.id}"
    worktree = services.workspaces.prepare(task.id, task.title)
    assert worktree is not None
    for name, text in edits.items():
        (worktree.path / name).write_text(text, encoding="utf-8")
    services.signals.record(task.id, session, "done", summary=summary)
    commit = services.workspaces.commit_session(worktree, task.title, session, "done", summary, allowed=True)
    assert commit.after != commit.before
    services.sessions.start_session(
        session, task_id=task.id, recipe="task_execution", agent="claude", head_before=commit.before
    )
    services.sessions.finish_session(session, outcome="done", head_after=commit.after)
    return services.tasks.move(task.id, TaskStatus.IN_REVIEW, Mover.IMPORT)
