"""The project itself: its title and description, and how far its tasks have come."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import StringConstraints

from ralph_desk.domain.records import Project
from ralph_desk.domain.tools import TEXT_PATTERN, ClearableText
from ralph_desk.services import validation as check
from ralph_desk.services.errors import NotFoundError, ServiceError
from ralph_desk.services.progress import progress_dict
from ralph_desk.store import project_info as store
from ralph_desk.store import totals as totals_store
from ralph_desk.store.database import Database

MAX_TITLE = 200

Title = Annotated[str, StringConstraints(min_length=1, max_length=MAX_TITLE, pattern=TEXT_PATTERN)]


class ProjectNotInitialisedError(NotFoundError):
    """The database has no project row: `ralph-desk init` was never run on it."""

    def __init__(self) -> None:
        ServiceError.__init__(
            self,
            "this database has no project yet; run `ralph-desk init` in the project folder to create it",
        )
        self.kind = "project"
        self.key = None


class ProjectInfoService:
    """Read and set the project's title and description; report task progress."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def get(self) -> Project:
        """The project (title, description, creation time)."""
        with self.db.read() as unit:
            project = store.get(unit)
        if project is None:
            raise ProjectNotInitialisedError()
        return project

    def set(self, title: str, description: str | None = "") -> Project:
        """Create the project or change its title and description."""
        checked_title: str = check.value(Title, "title", title)
        checked_description: str = check.value(ClearableText | None, "description", description) or ""
        with self.db.write() as unit:
            return store.upsert(unit, checked_title, checked_description)

    def progress(self) -> dict[str, Any]:
        """Task counts: total, done, per status (every status), per feature, and the percentage done."""
        with self.db.read() as unit:
            tasks, by_feature = totals_store.task_counts(unit)
        return progress_dict(tasks, by_feature)
