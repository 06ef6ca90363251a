"""Applying post-processing decisions to a real SQLite project, and unblocking finished upstream work."""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ralph_desk.domain.enums import SessionOutcome, TaskOrigin, TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.domain.postprocess import decide
from ralph_desk.domain.records import Task
from ralph_desk.loop.apply import AppliedOutcome, apply_decision, unblock_ready
from ralph_desk.project import init_project
from ralph_desk.services.container import Services

pytestmark = pytest.mark.usefixtures("no_database_url_from_the_environment")

_sessions = itertools.count(1)


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    """A project with features `charts` and `tides` and the discipline `frontend`."""
    opened = Services.open(init_project(tmp_path / "harbour", title="Harbour"))
    opened.features.create("charts", "Charts")
    opened.features.create("tides", "Tides")
    opened.disciplines.create("frontend", "Frontend", icon="code", color="#3b82f6")
    yield opened
    opened.close()


def make_task(services: Services, title: str = "Draw the tide chart", status: str = "pending") -> Task:
    task = services.tasks.create("charts", "frontend", title)
    if status != "pending":
        services.tasks.move(task.id, status, Mover.IMPORT)
    return task


def run_session(
    services: Services, task: Task, *calls: tuple[str, dict[str, Any]], **knobs: Any
) -> AppliedOutcome:
    """A session on `task`: the agent's verb calls, then post-processing as the runner does it."""
    session_id = f"s-{next(_sessions)}"
    services.tasks.move(task.id, TaskStatus.IN_PROGRESS.value, Mover.IMPORT)
    for verb, params in calls:
        services.signals.record(task.id, session_id, verb, **params)
    stuck_count = services.tasks.get(task.id).stuck_count
    decision = decide(services.signals.for_session(session_id), stuck_count=stuck_count, **knobs)
    return apply_decision(services, task.id, session_id, decision)


DONE = ("done", {"summary": "Drew the chart; tests pass."})
PARTIAL = ("partial", {"summary": "Drew the axes.", "remaining": "Plot the curve."})
STUCK = ("stuck", {"reason": "No tide data source is reachable."})
ASK = ("ask", {"question": "Metres or feet?", "blocking": True})


def blocked(on: str, kind: str = "upstream_task") -> tuple[str, dict[str, Any]]:
    return ("blocked", {"on": on, "kind": kind})


def learned(text: str, scope: str, rationale: str | None = None) -> tuple[str, dict[str, Any]]:
    return ("learned", {"text": text, "kind": "discovery", "scope": scope, "rationale": rationale})


def progress_entries(services: Services) -> list[str]:
    """progress.txt's entries, without their timestamp headings."""
    lines = services.state_files.read_progress().splitlines()
    return [line for line in lines if line and not line.startswith("## ")]


# --- task status and stuck count ------------------------------------------------------------------


def test_done_makes_the_task_done_with_its_completion_time(services: Services) -> None:
    task = make_task(services)

    applied = run_session(services, task, DONE)

    assert applied.task.status is TaskStatus.DONE
    assert applied.task.completed_at is not None
    assert applied.task.stuck_count == 0


def test_done_waiting_in_review_is_recorded_as_such_in_progress_txt(services: Services) -> None:
    task = make_task(services)
    session_id = f"s-{next(_sessions)}"
    services.tasks.move(task.id, TaskStatus.IN_PROGRESS.value, Mover.IMPORT)
    services.signals.record(task.id, session_id, *DONE[:1], **DONE[1])
    decision = decide(services.signals.for_session(session_id), stuck_count=0)
    # What the review gate makes of `done` on a task branch (loop/branches.gate).
    applied = apply_decision(services, task.id, session_id, replace(decision, status=TaskStatus.IN_REVIEW))

    assert applied.task.status is TaskStatus.IN_REVIEW
    assert progress_entries(services) == [
        f"task #{task.id} 'Draw the tide chart': done, waiting in review — Drew the chart; tests pass."
    ]


def test_partial_requeues_the_task_without_counting_it_stuck(services: Services) -> None:
    task = make_task(services)

    applied = run_session(services, task, PARTIAL)

    assert (applied.task.status, applied.task.stuck_count) == (TaskStatus.PENDING, 0)
    assert applied.task.completed_at is None


def test_stuck_requeues_the_task_and_raises_its_stuck_count(services: Services) -> None:
    task = make_task(services)

    applied = run_session(services, task, STUCK)

    assert (applied.task.status, applied.task.stuck_count) == (TaskStatus.PENDING, 1)


def test_a_session_without_closing_verb_counts_as_stuck(services: Services) -> None:
    task = make_task(services)

    applied = run_session(services, task)

    assert (applied.task.status, applied.task.stuck_count) == (TaskStatus.PENDING, 1)
    assert progress_entries(services) == [
        "task #1 'Draw the tide chart': stuck (no closing verb), stuck count 1 — "
        "session ended without closing signal"
    ]


def test_the_third_stuck_session_fails_the_task(services: Services) -> None:
    task = make_task(services)

    statuses = [run_session(services, task, STUCK).task.status for _ in range(3)]

    assert statuses == [TaskStatus.PENDING, TaskStatus.PENDING, TaskStatus.FAILED]
    assert services.tasks.get(task.id).stuck_count == 3


def test_a_stagnant_partial_counts_as_stuck(services: Services) -> None:
    task = make_task(services)

    applied = run_session(services, task, PARTIAL, stagnant=True)

    assert (applied.task.status, applied.task.stuck_count) == (TaskStatus.PENDING, 1)
    assert progress_entries(services)[-1].startswith(
        "task #1 'Draw the tide chart': stuck (partial, changed nothing), stuck count 1"
    )


def test_a_blocking_question_with_partial_waits_for_input_until_answered(services: Services) -> None:
    task = make_task(services)

    applied = run_session(services, task, ASK, PARTIAL)

    assert applied.task.status is TaskStatus.NEEDS_INPUT
    ask = services.signals.for_task(task.id)[0]
    services.inbox.answer(ask.id, "Metres.")
    assert services.tasks.get(task.id).status is TaskStatus.PENDING


@pytest.mark.parametrize(
    ("knobs", "outcome"),
    [
        ({"stopped_by_human": True}, SessionOutcome.STOPPED),
        ({"rate_limited": True}, SessionOutcome.RATE_LIMITED),
    ],
)
def test_a_stopped_or_rate_limited_session_requeues_the_task_with_its_stuck_count_kept(
    services: Services, knobs: dict[str, bool], outcome: SessionOutcome
) -> None:
    task = make_task(services)
    services.tasks.increment_stuck(task.id)

    applied = run_session(services, task, **knobs)

    assert (applied.task.status, applied.task.stuck_count) == (TaskStatus.PENDING, 1)
    assert "re-queued" in applied.progress_line


# --- blockers and dependencies -------------------------------------------------------------------


def test_blocked_upstream_by_number_adds_the_dependency_and_blocks_the_task(services: Services) -> None:
    make_task(services, "Set up the schema")
    make_task(services, "Seed the tide table")
    upstream = make_task(services, "Write the migration")
    task = make_task(services)

    applied = run_session(services, task, blocked(f"#{upstream.id}"), PARTIAL)

    assert upstream.id == 3
    assert applied.added_dependencies == (3,)
    assert applied.task.depends_on == (3,)
    assert applied.task.status is TaskStatus.BLOCKED


def test_blocked_upstream_by_title_adds_the_dependency_on_the_only_open_match(services: Services) -> None:
    upstream = make_task(services, "Set up the schema")
    make_task(services, "Set up the schema (old attempt)", status="done")
    task = make_task(services)

    applied = run_session(services, task, blocked("waiting for 'set up the schema' to land"), STUCK)

    assert applied.task.depends_on == (upstream.id,)
    assert applied.task.status is TaskStatus.BLOCKED


@pytest.mark.parametrize(
    ("on", "why"),
    [
        ("#99", "there is no task #99"),
        ("#4", "is the blocked task itself"),
        ("#3", "is already done"),
        ("the 'Set up' work", "2 open tasks have 'Set up' in their title"),
        ("the radar feed", "no open task has 'the radar feed' in its title"),
        ("#1", "cycle"),
    ],
    ids=["missing", "itself", "done", "ambiguous", "not-found", "cycle"],
)
def test_an_upstream_blocker_that_names_no_usable_task_blocks_like_an_external_one(
    services: Services, on: str, why: str
) -> None:
    make_task(services, "Set up the schema")
    make_task(services, "Set up the feed")
    make_task(services, "Write the migration", status="done")
    task = make_task(services)
    services.tasks.add_dependency(1, task.id)

    applied = run_session(services, task, blocked(on), PARTIAL)

    assert applied.added_dependencies == ()
    assert applied.task.depends_on == ()
    assert applied.task.status is TaskStatus.BLOCKED
    assert [blocker.on for blocker in applied.unresolved_blockers] == [on]
    assert why in applied.notes[0]
    assert why in services.comments.list(task.id)[-1].body


def test_a_blocker_followed_by_done_adds_no_dependency(services: Services) -> None:
    upstream = make_task(services, "Set up the schema")
    task = make_task(services)

    applied = run_session(services, task, blocked(f"#{upstream.id}"), DONE)

    assert applied.task.depends_on == ()
    assert applied.task.status is TaskStatus.DONE


def test_blocked_external_blocks_the_task(services: Services) -> None:
    task = make_task(services)

    applied = run_session(services, task, blocked("NOAA API key", kind="external"), PARTIAL)

    assert applied.task.status is TaskStatus.BLOCKED
    assert applied.progress_line == "task #1 'Draw the tide chart': partial, blocked — on: NOAA API key"


# --- unblocking ------------------------------------------------------------------------------------


def test_a_task_blocked_upstream_goes_back_to_pending_when_its_upstream_is_done(services: Services) -> None:
    upstream = make_task(services, "Set up the schema")
    task = make_task(services)
    run_session(services, task, blocked(f"#{upstream.id}"), PARTIAL)

    assert unblock_ready(services) == []
    services.tasks.move(upstream.id, TaskStatus.DONE.value, Mover.IMPORT)
    assert unblock_ready(services) == [task.id]
    assert services.tasks.get(task.id).status is TaskStatus.PENDING


def test_a_task_blocked_on_two_upstream_tasks_waits_for_both(services: Services) -> None:
    first = make_task(services, "Set up the schema")
    second = make_task(services, "Seed the tide table")
    task = make_task(services)
    run_session(services, task, blocked(f"task {first.id}"), blocked("'Seed the tide table'"), STUCK)
    assert services.tasks.get(task.id).depends_on == (first.id, second.id)

    services.tasks.move(first.id, TaskStatus.DONE.value, Mover.IMPORT)
    assert unblock_ready(services) == []
    services.tasks.move(second.id, TaskStatus.DONE.value, Mover.IMPORT)
    assert unblock_ready(services) == [task.id]


def test_an_external_blocker_stays_even_when_the_upstream_one_is_done(services: Services) -> None:
    upstream = make_task(services, "Set up the schema")
    task = make_task(services)
    run_session(services, task, blocked(f"#{upstream.id}"), blocked("VPN access", kind="external"), PARTIAL)
    services.tasks.move(upstream.id, TaskStatus.DONE.value, Mover.IMPORT)

    assert unblock_ready(services) == []
    assert services.tasks.get(task.id).status is TaskStatus.BLOCKED


@pytest.mark.sqlite_only  # writes the SQLite file as another tool would
def test_a_blocker_that_cannot_be_read_keeps_the_task_blocked(services: Services) -> None:
    upstream = make_task(services, "Set up the schema")
    task = make_task(services)
    run_session(services, task, blocked(f"#{upstream.id}"), blocked("VPN access", kind="external"), PARTIAL)
    services.tasks.move(upstream.id, TaskStatus.DONE.value, Mover.IMPORT)
    raw = sqlite3.connect(services.paths.db_file)
    try:  # the external blocker's text, as bytes that are not UTF-8
        raw.execute("UPDATE task_signals SET \"on\" = CAST(X'41FF' AS TEXT) WHERE \"on\" = 'VPN access'")
        raw.commit()
    finally:
        raw.close()

    assert unblock_ready(services) == []
    assert services.tasks.get(task.id).status is TaskStatus.BLOCKED


@pytest.mark.parametrize("on", ["the radar feed", "#99"])
def test_an_unresolved_upstream_blocker_stays_for_the_human(services: Services, on: str) -> None:
    upstream = make_task(services, "Set up the schema")
    task = make_task(services)
    run_session(services, task, blocked(on), PARTIAL)
    services.tasks.add_dependency(task.id, upstream.id)
    services.tasks.move(upstream.id, TaskStatus.DONE.value, Mover.IMPORT)

    assert unblock_ready(services) == []


def test_a_task_a_person_blocked_without_signals_stays_blocked(services: Services) -> None:
    upstream = make_task(services, "Set up the schema", status="done")
    task = make_task(services)
    services.tasks.add_dependency(task.id, upstream.id)
    services.tasks.move(task.id, TaskStatus.BLOCKED.value, Mover.IMPORT)

    assert unblock_ready(services) == []


# --- suggestions, learnings, progress ------------------------------------------------------------


def test_a_new_task_suggestion_becomes_a_draft_task_of_agent_origin(services: Services) -> None:
    task = make_task(services)
    suggest = ("suggest", {"what": "Add a legend", "kind": "new_task", "why": "Lines look alike."})
    refactor = ("suggest", {"what": "Split chart.py", "kind": "refactor", "why": "Too long."})

    applied = run_session(services, task, suggest, refactor, DONE)

    assert len(applied.created_task_ids) == 1
    draft = services.tasks.get(applied.created_task_ids[0])
    assert (draft.title, draft.status, draft.origin) == ("Add a legend", TaskStatus.DRAFT, TaskOrigin.AGENT)
    assert len(services.tasks.list()) == 2


def test_a_feature_learning_is_stored_once_and_its_repeat_raises_the_hit_count(services: Services) -> None:
    task = make_task(services)

    first = run_session(services, task, learned("Heights are in metres.", "feature", "NOAA says so"), PARTIAL)
    again = run_session(services, task, learned("Heights are in metres.", "feature"), DONE)

    [learning] = services.features.get("charts").learnings
    assert first.feature_learnings[0].id == again.feature_learnings[0].id == learning.id
    assert (learning.hit_count, learning.source, learning.reason) == (2, "agent", "NOAA says so")
    assert learning.task_id == task.id
    assert services.state_files.read_learnings() == ""


def test_a_project_learning_is_written_to_learnings_txt_once(services: Services) -> None:
    task = make_task(services)

    run_session(services, task, learned("Run the tests with make check.", "project"), PARTIAL)
    run_session(services, task, learned("Run the tests with make check.", "project"), DONE)

    assert services.state_files.read_learnings().count("Run the tests with make check.") == 1
    assert services.features.get("charts").learnings[0].hit_count == 2


def test_a_task_learning_stays_a_signal_only(services: Services) -> None:
    task = make_task(services)

    applied = run_session(services, task, learned("Tried canvas; too slow.", "task"), PARTIAL)

    assert applied.feature_learnings == ()
    assert services.features.get("charts").learnings == ()
    assert services.state_files.read_learnings() == ""
    assert [s.text for s in services.signals.learnings(scope="task")] == ["Tried canvas; too slow."]


def test_every_session_appends_one_progress_line(services: Services) -> None:
    task = make_task(services)

    run_session(services, task, PARTIAL)
    run_session(services, task, ASK, STUCK)
    run_session(services, task, DONE)

    assert progress_entries(services) == [
        "task #1 'Draw the tide chart': partial — remaining: Plot the curve.",
        "task #1 'Draw the tide chart': stuck, needs input — asked: Metres or feet?",
        "task #1 'Draw the tide chart': done — Drew the chart; tests pass.",
    ]


def test_a_long_or_multiline_detail_is_one_clipped_line(services: Services) -> None:
    task = make_task(services)
    long_reason = "first line\n" + "word " * 200

    applied = run_session(services, task, ("stuck", {"reason": long_reason}))

    assert "\n" not in applied.progress_line
    assert applied.progress_line.endswith("…")
    assert len(applied.progress_line) < 400
