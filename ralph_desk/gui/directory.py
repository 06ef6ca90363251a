"""Every task summary by id, kept current from change notices: titles for the inbox, lists for filters."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ralph_desk.domain.records import TaskSummary

if TYPE_CHECKING:
    from ralph_desk.gui.backend import Services


class TaskDirectory:
    """A plain index of task summaries; the Tasks wiring keeps it current."""

    def __init__(self) -> None:
        self.by_id: dict[int, TaskSummary] = {}
        self.features: list[str] = []
        self.disciplines: list[str] = []

    def replace(self, summaries: Iterable[TaskSummary]) -> None:
        """Hold exactly these tasks."""
        self.by_id = {summary.id: summary for summary in summaries}

    def update(self, summaries: Iterable[TaskSummary], removed: Iterable[int] = ()) -> None:
        """Add or replace these tasks and drop the removed ids."""
        for summary in summaries:
            self.by_id[summary.id] = summary
        for task_id in removed:
            self.by_id.pop(task_id, None)

    def get(self, task_id: int) -> TaskSummary | None:
        """The summary of a task, if known."""
        return self.by_id.get(task_id)

    def title(self, task_id: int) -> str:
        """A task's title (empty when unknown)."""
        summary = self.by_id.get(task_id)
        return summary.title if summary is not None else ""

    def summaries(self) -> list[TaskSummary]:
        """Every task, by id."""
        return [self.by_id[task_id] for task_id in sorted(self.by_id)]


def names_of(services: Services) -> tuple[list[str], list[str]]:
    """The names of every feature and every discipline (an operation for the worker)."""
    features, disciplines = services.features.list(), services.disciplines.list()
    return [feature.name for feature in features], [discipline.name for discipline in disciplines]
