"""All services of one project, built over one database."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from ralph_desk.domain.checks import Verdict
from ralph_desk.project import ProjectPaths
from ralph_desk.store.database import Database

log = logging.getLogger("ralph_desk.services")

if TYPE_CHECKING:  # each service is imported when first used: a process reading tasks needs no reviews
    from ralph_desk.services.checks import CheckService
    from ralph_desk.services.comments import CommentService
    from ralph_desk.services.companion import CompanionService
    from ralph_desk.services.disciplines import DisciplineService
    from ralph_desk.services.features import FeatureService
    from ralph_desk.services.inbox import InboxService
    from ralph_desk.services.progress import ProgressService
    from ralph_desk.services.project_info import ProjectInfoService
    from ralph_desk.services.retiring import RetiringService
    from ralph_desk.services.reviews import ReviewService
    from ralph_desk.services.sessions import SessionService
    from ralph_desk.services.settling import SettlingService
    from ralph_desk.services.signals import SignalService
    from ralph_desk.services.state_files import StateFileService
    from ralph_desk.services.tasks import TaskService
    from ralph_desk.services.workspaces import WorkspaceService


@dataclass
class Services:
    """The one API the window, the MCP server, the loop and the CLI call."""

    paths: ProjectPaths
    db: Database

    @classmethod
    def open(cls, paths: ProjectPaths, db_url: str | None = None, migrate: bool = True) -> Services:
        """Open (and migrate) the project's database and build the services over it."""
        services = cls(paths, Database(paths.db_url(db_url), migrate_on_open=migrate))
        _complete_gitignore(paths)
        return services

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Several service calls as one transaction: every one of them commits, or none does."""
        with self.db.write():
            yield

    @cached_property
    def features(self) -> FeatureService:
        from ralph_desk.services.features import FeatureService

        return FeatureService(self.db)

    @cached_property
    def disciplines(self) -> DisciplineService:
        from ralph_desk.services.disciplines import DisciplineService

        return DisciplineService(self.db, self.paths.root)

    @cached_property
    def tasks(self) -> TaskService:
        from ralph_desk.services.tasks import TaskService

        return TaskService(self.db, self._has_unmerged_work, self._checks_verdict)

    def _has_unmerged_work(self, task_id: int) -> bool:
        """Whether the task has a branch here (its work is not merged: a merge removes the branch)."""
        return self.workspaces.existing(task_id) is not None

    def _checks_verdict(self, task_id: int) -> Verdict:
        """What the task's latest check runs say of the project's configured checks."""
        return self.checks.verdict(task_id, self.workspaces.config().checks)

    @cached_property
    def comments(self) -> CommentService:
        from ralph_desk.services.comments import CommentService

        return CommentService(self.db)

    @cached_property
    def signals(self) -> SignalService:
        from ralph_desk.services.signals import SignalService

        return SignalService(self.db)

    @cached_property
    def settling(self) -> SettlingService:
        from ralph_desk.services.settling import SettlingService

        return SettlingService(self.db, self.state_files)

    @cached_property
    def inbox(self) -> InboxService:
        from ralph_desk.services.inbox import InboxService

        return InboxService(self.db)

    @cached_property
    def sessions(self) -> SessionService:
        from ralph_desk.services.sessions import SessionService

        return SessionService(self.db)

    @cached_property
    def project(self) -> ProjectInfoService:
        from ralph_desk.services.project_info import ProjectInfoService

        return ProjectInfoService(self.db)

    @cached_property
    def progress(self) -> ProgressService:
        from ralph_desk.services.progress import ProgressService

        return ProgressService(self.db)

    @cached_property
    def state_files(self) -> StateFileService:
        from ralph_desk.services.state_files import StateFileService

        return StateFileService(self.paths, self.db)

    @cached_property
    def workspaces(self) -> WorkspaceService:
        from ralph_desk.services.workspaces import WorkspaceService

        return WorkspaceService(self.paths, self.db)

    @cached_property
    def reviews(self) -> ReviewService:
        from ralph_desk.services.reviews import ReviewService

        return ReviewService(self.db, self.workspaces, self.tasks, self.sessions, self.signals, self.checks)

    @cached_property
    def checks(self) -> CheckService:
        from ralph_desk.services.checks import CheckService

        return CheckService(self.db, self.paths)

    @cached_property
    def retiring(self) -> RetiringService:
        from ralph_desk.services.retiring import RetiringService

        return RetiringService(self.tasks, self.workspaces)

    def companion(self, secret: bytes) -> CompanionService:
        """Pairing and devices of the companion page; `secret` is the person's key (not the project's)."""
        from ralph_desk.services.companion import CompanionService

        return CompanionService(self.db, secret)

    def close(self) -> None:
        """Release the database connections."""
        self.db.dispose()


def _complete_gitignore(paths: ProjectPaths) -> None:
    """An older project's `.ralph/.gitignore` gets the lines it lacks (its lock files showed as untracked)."""
    from ralph_desk.project.errors import ProjectError
    from ralph_desk.project.init import complete_gitignore

    try:
        added = complete_gitignore(paths)
    except (ProjectError, OSError) as error:  # opening goes on: the file is a convenience, not state
        log.warning("could not complete %s: %s", paths.ralph / ".gitignore", error)
        return
    if added:
        log.info("added %s to %s", ", ".join(added), paths.ralph / ".gitignore")
