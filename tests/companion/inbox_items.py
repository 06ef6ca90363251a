"""What waits in a project's inbox, made as agents make it: a question, a suggestion, a flag, a failure."""

from __future__ import annotations

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.domain.records import Signal, Task
from ralph_desk.services.container import Services


def with_feature(services: Services) -> None:
    """Feature `core` and discipline `backend`, which every task here belongs to."""
    services.features.create("core", "Core")
    services.disciplines.create("backend", "Backend", "server", "#336699")


def blocked_on_question(services: Services, title: str = "Draw the chart") -> tuple[Task, Signal]:
    """A task in needs_input on a blocking question with two options (metres preferred)."""
    task = services.tasks.create("core", "backend", title)
    ask = services.signals.record(
        task.id,
        f"s-{task.id}",
        "ask",
        question="Metres or feet?",
        options=["metres", "feet"],
        preferred="metres",
        blocking=True,
    )
    services.tasks.move(task.id, TaskStatus.NEEDS_INPUT, Mover.IMPORT)
    return task, ask


def suggested(services: Services, what: str = "Add a legend to the chart") -> Signal:
    """A new_task suggestion an agent made on a task of its own."""
    task = services.tasks.create("core", "backend", f"Work that led to: {what}")
    return services.signals.record(
        task.id,
        f"s-{task.id}",
        "suggest",
        kind="new_task",
        what=what,
        why="Readers cannot tell the lines apart.",
    )


def flagged(services: Services, what: str = "The docs name a flag that is gone") -> Signal:
    """An open warning flag on a task."""
    task = services.tasks.create("core", "backend", "Tidy the docs")
    return services.signals.record(
        task.id, f"s-{task.id}", "flag", what=what, severity="warning", category="stale"
    )


def failed(services: Services, title: str = "Migrate the store") -> Task:
    """A task that failed (stuck too often)."""
    task = services.tasks.create("core", "backend", title)
    return services.tasks.move(task.id, TaskStatus.FAILED, Mover.IMPORT)
