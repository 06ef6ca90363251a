"""Post-processing writes a session's outcome in one transaction, the same as one write per step did."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.domain.postprocess import decide
from ralph_desk.domain.records import Change, Task
from ralph_desk.loop.apply import AppliedOutcome, apply_decision
from ralph_desk.project import init_project
from ralph_desk.services.container import Services
from ralph_desk.services.errors import ServiceError
from ralph_desk.services.features import NewLearning
from ralph_desk.store import tasks as tasks_store

_sessions = itertools.count(1)


@pytest.fixture(autouse=True)
def _no_database_url_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RALPH_DB_URL", raising=False)


def _open(root: Path) -> Services:
    opened = Services.open(init_project(root, title="Harbour"))
    opened.features.create("charts", "Charts")
    opened.disciplines.create("frontend", "Frontend", icon="code", color="#3b82f6")
    return opened


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    """A project with the feature `charts` and the discipline `frontend`."""
    opened = _open(tmp_path / "harbour")
    yield opened
    opened.close()


def run_session(services: Services, task: Task, *calls: tuple[str, dict[str, Any]]) -> AppliedOutcome:
    """A session on `task`: the agent's verb calls, then post-processing as the runner does it."""
    session_id = f"s-{next(_sessions)}"
    services.tasks.move(task.id, TaskStatus.IN_PROGRESS.value, Mover.IMPORT)
    for verb, params in calls:
        services.signals.record(task.id, session_id, verb, **params)
    decision = decide(services.signals.for_session(session_id), stuck_count=task.stuck_count)
    return apply_decision(services, task.id, session_id, decision)


def learned(text: str, scope: str = "feature") -> tuple[str, dict[str, Any]]:
    return ("learned", {"text": text, "kind": "discovery", "scope": scope, "rationale": "seen in the logs"})


def suggest(what: str) -> tuple[str, dict[str, Any]]:
    return ("suggest", {"what": what, "kind": "new_task", "why": "It keeps coming up."})


DONE = ("done", {"summary": "Drew the chart."})


def test_a_busy_session_is_written_in_one_transaction_with_its_progress_line(services: Services) -> None:
    task = services.tasks.create("charts", "frontend", "Draw the tide chart")
    units: list[list[Change]] = []
    unsubscribe = services.db.subscribe(units.append)
    calls = [suggest("Add a legend"), suggest("Add a scale"), learned("Heights are in metres."), DONE]
    try:
        applied = run_session(services, task, *calls)
    finally:
        unsubscribe()

    # The status change that starts the session, the four verb calls, the outcome with progress.txt.
    outcome = units[5]
    assert len(units) == 6
    assert {change.topic for change in outcome} >= {
        "tasks",
        "signals",
        "inbox",
        "features",
        "learnings",
        "state_files",
    }
    assert "Draw the tide chart" in services.state_files.read_progress()
    assert applied.task.status is TaskStatus.DONE
    assert len(applied.created_task_ids) == 2
    assert [services.tasks.get(i).title for i in applied.created_task_ids] == ["Add a legend", "Add a scale"]


def test_nothing_is_written_when_the_transaction_fails(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = services.tasks.create("charts", "frontend", "Draw the tide chart")

    def broken(*_: Any) -> list[int]:
        raise RuntimeError("the disk went away")

    monkeypatch.setattr(tasks_store, "create_many", broken)
    with pytest.raises(RuntimeError):
        run_session(
            services, task, suggest("Add a legend"), learned("Heights are in metres.", "project"), DONE
        )

    assert services.tasks.get(task.id).status is TaskStatus.IN_PROGRESS
    assert services.features.get("charts").learnings == ()
    assert services.state_files.read_progress() == ""
    assert services.state_files.read_learnings() == ""


def test_a_suggestion_that_makes_no_draft_is_noted_and_the_rest_is_written(services: Services) -> None:
    task = services.tasks.create("charts", "frontend", "Draw the tide chart")
    session_id = f"s-{next(_sessions)}"
    refactor = services.signals.record(
        task.id, session_id, "suggest", what="Split chart.py", kind="refactor", why="Long."
    )
    services.signals.record(task.id, session_id, "learned", **learned("Heights are in metres.")[1])
    services.signals.record(task.id, session_id, "done", **DONE[1])
    decision = decide(services.signals.for_session(session_id), stuck_count=0)

    applied = apply_decision(services, task.id, session_id, replace(decision, suggestion_ids=(refactor.id,)))

    assert applied.created_task_ids == ()
    assert len(applied.notes) == 1
    assert f"suggestion {refactor.id} made no draft task" in applied.notes[0]
    assert "only new_task suggestions become tasks" in applied.notes[0]
    assert applied.task.status is TaskStatus.DONE
    assert [learning.text for learning in applied.feature_learnings] == ["Heights are in metres."]


def test_a_refused_dependency_is_commented_in_the_same_transaction(services: Services) -> None:
    task = services.tasks.create("charts", "frontend", "Draw the tide chart")

    partial = ("partial", {"summary": "Drew the axes.", "remaining": "Plot the curve."})
    applied = run_session(services, task, ("blocked", {"on": "#99", "kind": "upstream_task"}), partial)

    assert applied.added_dependencies == ()
    assert [comment.body for comment in applied.task.comments] == [applied.notes[0]]
    assert "there is no task #99" in applied.notes[0]
    assert applied.task.status is TaskStatus.BLOCKED


def test_the_task_read_back_has_its_comments_and_dependencies_in_order(services: Services) -> None:
    first = services.tasks.create("charts", "frontend", "Set up the schema")
    second = services.tasks.create("charts", "frontend", "Seed the tide table")
    task = services.tasks.create(
        "charts", "frontend", "Draw the tide chart", depends_on=[second.id, first.id]
    )
    services.comments.add(task.id, "human", "Start with the axes.")
    services.comments.add(task.id, "human", "Metres, please.")

    read = services.tasks.get(task.id)

    assert read.depends_on == (first.id, second.id)
    assert [comment.body for comment in read.comments] == ["Start with the axes.", "Metres, please."]
    assert services.tasks.get(first.id).comments == ()


TEXTS = [
    "Station ids are zero-padded to five digits.",
    "Heights are in metres.",
    "Station ids are zero padded to five digits",
    "Heights are in metres",
    "Tides repeat every 12 hours 25 minutes.",
    "Station ids are zero-padded to five digits.",
]


def test_appending_learnings_in_one_batch_gives_what_appending_them_one_by_one_gives(
    services: Services,
) -> None:
    services.features.create("maps", "Maps")
    for feature in ("charts", "maps"):
        services.features.append_learning(feature, "Heights are in metres!", source="human")

    sequential = [services.features.append_learning("charts", text, task_id=None) for text in TEXTS]
    together = services.features.append_learnings("maps", [NewLearning(text) for text in TEXTS])

    def shape(results: list[Any], feature: str) -> list[tuple[int, str, int, bool]]:
        """Each result with its learning's position in the feature instead of its id."""
        order = [item.id for item in services.features.get(feature).learnings]
        return [
            (order.index(learning.id), learning.text, learning.hit_count, new) for learning, new in results
        ]

    assert shape(together, "maps") == shape(sequential, "charts")
    stored = [(item.text, item.hit_count) for item in services.features.get("maps").learnings]
    assert stored == [(item.text, item.hit_count) for item in services.features.get("charts").learnings]


def test_a_batch_learning_that_fails_its_check_is_its_error_and_the_others_are_kept(
    services: Services,
) -> None:
    results = services.features.append_learnings(
        "charts",
        [NewLearning("Heights are in metres."), NewLearning("   "), NewLearning("Use UTC.", source="x")],
    )

    assert isinstance(results[1], ServiceError) and isinstance(results[2], ServiceError)
    assert not isinstance(results[0], ServiceError)
    assert [item.text for item in services.features.get("charts").learnings] == ["Heights are in metres."]


def test_a_batch_for_an_unknown_feature_is_refused_item_by_item(services: Services) -> None:
    results = services.features.append_learnings("radar", [NewLearning("Heights are in metres.")])

    assert [type(result).__name__ for result in results] == ["NotFoundError"]
