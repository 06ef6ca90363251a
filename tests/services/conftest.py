"""Fixtures for the service tests: a small project (two features, two disciplines) and its services."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pytest
from sqlalchemy import update

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.domain.records import Change, Signal, Task
from ralph_desk.services.disciplines import DisciplineService
from ralph_desk.services.features import FeatureService
from ralph_desk.services.inbox import InboxService
from ralph_desk.services.signals import SignalService
from ralph_desk.services.tasks import TaskService
from ralph_desk.store.database import Database
from ralph_desk.store.schema import TaskSignalRow


@dataclass
class Desk:
    """The services of a test project, plus shortcuts that set up typical situations."""

    db: Database
    tasks: TaskService
    signals: SignalService
    inbox: InboxService

    def task(
        self, title: str = "Draw the tide chart", feature: str = "charts", discipline: str = "frontend"
    ) -> Task:
        """A pending task."""
        return self.tasks.create(feature, discipline, title)

    def ask(
        self, task: Task, question: str = "Metres or feet?", blocking: bool = True, **params: Any
    ) -> Signal:
        """An agent's question on `task`."""
        return self.signals.record(task.id, "s-1", "ask", question=question, blocking=blocking, **params)

    def waiting_for_input(self, task: Task, *questions: str) -> list[Signal]:
        """`task` in needs_input after a session asked blocking questions (as post-processing leaves it)."""
        asks = [self.ask(task, question) for question in questions or ("Metres or feet?",)]
        self.signals.record(task.id, "s-1", "partial", summary="Drew the axes.", remaining="Units.")
        self.tasks.move(task.id, TaskStatus.NEEDS_INPUT.value, Mover.IMPORT)
        return asks

    def flag(self, task: Task, what: str, severity: str = "warning", category: str = "bug") -> Signal:
        """A flag raised by an agent working on `task`."""
        return self.signals.record(task.id, "s-1", "flag", what=what, severity=severity, category=category)

    def suggest(
        self, task: Task, what: str = "Add a legend", kind: str = "new_task", **params: Any
    ) -> Signal:
        """A suggestion made by an agent working on `task`."""
        params.setdefault("why", "Readers cannot tell the lines apart.")
        return self.signals.record(task.id, "s-1", "suggest", what=what, kind=kind, **params)

    def set_created(self, signal: Signal, when: datetime) -> None:
        """Move a signal's creation time (to test ordering without waiting)."""
        with self.db.write() as unit:
            unit.session.execute(
                update(TaskSignalRow).where(TaskSignalRow.id == signal.id).values(created=when)
            )


@pytest.fixture
def desk(db: Database) -> Desk:
    features = FeatureService(db)
    features.create("charts", "Charts")
    features.create("tides", "Tides")
    disciplines = DisciplineService(db)
    disciplines.create("frontend", "Frontend", icon="code", color="#3b82f6")
    disciplines.create("backend", "Backend", icon="server", color="#10b981")
    return Desk(db, TaskService(db), SignalService(db), InboxService(db))


@pytest.fixture
def changes(db: Database) -> Iterator[list[Change]]:
    """Every change notice published after the fixture starts."""
    seen: list[Change] = []
    unsubscribe = db.subscribe(seen.extend)
    yield seen
    unsubscribe()


def topics(changes: list[Change]) -> set[str]:
    """The topics of some change notices."""
    return {change.topic for change in changes}


@pytest.fixture
def heard(db: Database) -> Iterator[list[Change]]:
    """Every change notice published from here on."""
    seen: list[Change] = []
    unsubscribe = db.subscribe(seen.extend)
    yield seen
    unsubscribe()
