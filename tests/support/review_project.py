"""A project that is a git repository with everything committed, open, with a feature and a discipline."""

from __future__ import annotations

from pathlib import Path

from ralph_desk.project import init_project
from ralph_desk.services.container import Services
from tests.support.git_repo import commit_all, make_repo

__all__ = ["open_review_project", "read_tip"]


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
