"""The Tidewater demo project: every part of the product is present, in the promised numbers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ralph_desk import demo
from ralph_desk.cli import main
from ralph_desk.domain.enums import TaskOrigin, TaskStatus, Verb
from ralph_desk.domain.records import Signal
from ralph_desk.project import ProjectError, ProjectPaths, validate_project
from ralph_desk.services.container import Services

pytestmark = pytest.mark.usefixtures("no_database_url_from_the_environment")


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("demo") / "tidewater"
    demo.create_demo(path)
    return path


@pytest.fixture(scope="module")
def services(root: Path) -> Iterator[Services]:
    opened = Services.open(ProjectPaths.at(root))
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def status(root: Path) -> dict[str, Any]:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["status", "--json", "--root", str(root)]) == 0
    report: dict[str, Any] = json.loads(out.getvalue())
    return report


@pytest.fixture(scope="module")
def signals(services: Services) -> list[Signal]:
    return [signal for task in services.tasks.list() for signal in services.signals.for_task(task.id)]


def test_the_demo_is_a_valid_project(root: Path) -> None:
    assert validate_project(root) == []


def test_status_reports_at_least_twenty_tasks_in_every_status(status: dict[str, Any]) -> None:
    by_status = status["tasks"]["by_status"]
    assert status["tasks"]["total"] >= 20
    # A task in review has a branch to show; the demo is not a git repository, so it has none.
    assert by_status.pop(TaskStatus.IN_REVIEW.value) == 0
    assert all(count >= 1 for count in by_status.values()), by_status
    assert set(by_status) | {TaskStatus.IN_REVIEW.value} == {member.value for member in TaskStatus}


def test_status_reports_three_questions_three_suggestions_and_five_flags(status: dict[str, Any]) -> None:
    assert status["inbox"] == {"asks": 3, "suggestions": 3, "flags": 5}


def test_status_reports_the_cost_of_past_sessions(status: dict[str, Any]) -> None:
    assert status["cost"]["sessions"] >= 2
    assert status["cost"]["total_usd"] > 0
    assert status["cost"]["turns"] > 0


def test_the_project_has_a_title_and_description(status: dict[str, Any]) -> None:
    assert status["project"]["title"] == "Tidewater"
    assert "tide" in status["project"]["description"]


def test_features_are_described_with_architecture_boundaries_context_and_learnings(
    services: Services,
) -> None:
    features = [services.features.get(feature.name) for feature in services.features.list()]

    assert len(features) >= 3
    described = [f for f in features if f.description and f.architecture and f.boundaries and f.context_files]
    assert len(described) >= 3
    assert sum(len(feature.learnings) for feature in features) >= 3
    assert {learning.source for feature in features for learning in feature.learnings} >= {"human", "agent"}


def test_four_disciplines_one_taking_tools_away_and_one_with_an_extra_server(services: Services) -> None:
    disciplines = {discipline.name: discipline for discipline in services.disciplines.list()}

    assert {"frontend", "backend", "testing", "docs"} <= set(disciplines)
    assert set(disciplines["docs"].disabled_tools) == {"learned", "suggest"}
    assert [server.name for server in disciplines["frontend"].mcp_servers] == ["playwright"]


def test_signals_of_all_eight_verbs_are_recorded_with_session_ids(signals: list[Signal]) -> None:
    assert {signal.verb for signal in signals} == set(Verb)
    assert all(signal.session_id for signal in signals)


def test_each_signal_is_dated_within_its_session(signals: list[Signal], services: Services) -> None:
    sessions = {session.id: session for session in services.sessions.list()}
    dated = [signal for signal in signals if signal.session_id in sessions]

    assert len(dated) > 20
    for signal in dated:
        session = sessions[signal.session_id]
        assert session.started_at < signal.created < session.ended_at, signal


def test_the_waiting_questions_have_options_and_a_preferred_one(services: Services) -> None:
    asks = services.inbox.asks()

    assert len(asks) == 3
    for ask in asks:
        assert ask.blocking is True
        assert len(ask.options) >= 2
        assert ask.preferred in ask.options
        assert services.tasks.get(ask.task_id).status is TaskStatus.NEEDS_INPUT


def test_one_question_was_answered_and_its_task_is_pending_again(
    signals: list[Signal], services: Services
) -> None:
    answered = [signal for signal in signals if signal.verb is Verb.ASK and signal.answer]

    assert len(answered) == 1
    assert services.tasks.get(answered[0].task_id).status is TaskStatus.PENDING


def test_three_agent_suggested_draft_tasks_wait_for_review(services: Services) -> None:
    suggestions = services.inbox.suggestions()
    drafts = [services.tasks.get(s.created_task_id) for s in suggestions if s.created_task_id is not None]

    assert len(drafts) == 3
    assert all(task.origin is TaskOrigin.AGENT and task.status is TaskStatus.DRAFT for task in drafts)


def test_five_open_flags_of_mixed_severity_and_category(services: Services) -> None:
    flags = services.inbox.flags(resolution="open")

    assert len(flags) == 5
    assert {flag.severity for flag in flags} == {"info", "warning", "blocking"}
    assert len({flag.category for flag in flags}) == 5


def test_learnings_of_every_scope_are_recorded(signals: list[Signal]) -> None:
    scopes = {signal.scope for signal in signals if signal.verb is Verb.LEARNED}

    assert scopes == {"project", "feature", "task"}


def test_blockers_of_both_kinds_block_their_tasks(signals: list[Signal], services: Services) -> None:
    blockers = [signal for signal in signals if signal.verb is Verb.BLOCKED]

    assert {signal.kind for signal in blockers} == {"external", "upstream_task"}
    assert all(services.tasks.get(signal.task_id).status is TaskStatus.BLOCKED for signal in blockers)


def test_the_failed_task_was_stuck_three_times(services: Services) -> None:
    [failed] = services.tasks.list(status="failed")

    assert services.tasks.get(failed.id).stuck_count == 3
    stuck = [s for s in services.signals.for_task(failed.id) if s.verb is Verb.STUCK]
    assert len(stuck) == 3


def test_tasks_have_dependencies_and_comments(services: Services) -> None:
    tasks = [services.tasks.get(summary.id) for summary in services.tasks.list()]

    assert sum(1 for task in tasks if task.depends_on) >= 10
    assert sum(len(task.comments) for task in tasks) >= 5


def test_past_sessions_have_cost_turns_and_transcripts(services: Services, root: Path) -> None:
    sessions = services.sessions.list()

    assert len(sessions) >= 2
    for session in sessions:
        assert session.cost_usd > 0 and session.turns > 0 and session.ended_at is not None
        assert session.transcript_path is not None
        transcript = root / session.transcript_path
        events = [json.loads(line) for line in transcript.read_text().splitlines()]
        assert events[0]["session_id"] == session.id
        assert events[-1]["type"] == "result"
        assert transcript.with_suffix(".json").is_file()
    run = services.sessions.latest_loop_run()
    assert run is not None and run.iterations == len(sessions)


def test_progress_and_learnings_files_have_entries(root: Path) -> None:
    progress = (root / ".ralph" / "progress.txt").read_text()
    learnings = (root / ".ralph" / "learnings.txt").read_text()

    assert progress.count("## 2026-11-18 ") >= 3
    assert learnings.count("## 2026-11-18 ") >= 2


def test_the_demo_is_the_same_every_time(root: Path, services: Services, tmp_path: Path) -> None:
    again = demo.create_demo(tmp_path / "again")
    other = Services.open(again)
    try:
        first = [(t.id, t.title, t.status, t.feature) for t in services.tasks.list()]
        second = [(t.id, t.title, t.status, t.feature) for t in other.tasks.list()]
        first_signals = [
            (s.id, s.verb, s.session_id)
            for t in services.tasks.list()
            for s in services.signals.for_task(t.id)
        ]
        second_signals = [
            (s.id, s.verb, s.session_id) for t in other.tasks.list() for s in other.signals.for_task(t.id)
        ]
    finally:
        other.close()
    assert first == second
    assert first_signals == second_signals
    for name in ("progress.txt", "learnings.txt"):
        assert (root / ".ralph" / name).read_text() == (again.ralph / name).read_text()
    assert sorted(p.name for p in (root / ".ralph" / "logs").iterdir()) == sorted(
        p.name for p in again.logs_dir.iterdir()
    )


def test_the_demo_refuses_a_folder_with_a_project(root: Path) -> None:
    with pytest.raises(ProjectError, match="already exists"):
        demo.create_demo(root)


def test_a_demo_that_fails_half_way_leaves_no_project_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(services: Services) -> None:
        services.project.set("Half", "")
        raise RuntimeError("power cut")

    monkeypatch.setattr(demo, "build", broken)

    with pytest.raises(RuntimeError, match="power cut"):
        demo.create_demo(tmp_path / "half")

    assert not (tmp_path / "half" / ".ralph").exists()


def test_every_task_feature_and_discipline_the_story_names_is_in_it() -> None:
    story = demo.story()
    tasks = {task.key for task in story.tasks}
    features = {feature.name for feature in story.features}
    disciplines = {spec["name"] for spec in story.disciplines}

    assert {dep for task in story.tasks for dep in task.depends_on} <= tasks
    assert {s.task for s in story.sessions} | {story.running.task} | {c.task for c in story.comments} <= tasks
    assert {task.feature for task in story.tasks} <= features
    assert {task.discipline for task in story.tasks} <= disciplines
