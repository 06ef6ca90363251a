"""The built-in rehearsal agent: real sessions through the real MCP server, without a model or a program."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from ralph_desk import demo
from ralph_desk.cli import main
from ralph_desk.domain.checks import FAILED_HEADING, CheckStatus
from ralph_desk.domain.enums import SessionOutcome, TaskStatus, Verb
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.loop.agents import RehearsalAdapter, adapter_for
from ralph_desk.loop.agents.rehearsal import rehearsal_command
from ralph_desk.loop.model import EventKind, LiveEvent, LoopSettings
from ralph_desk.loop.settings import load_settings
from ralph_desk.project import read_config
from ralph_desk.services.container import Services
from tests.loop.conftest import run_loop

REHEARSAL = LoopSettings(agent="rehearsal", session_timeout_s=120)


@pytest.fixture
def tidewater(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Services]:
    """The demo project, on a PATH where no agent program can be found."""
    monkeypatch.delenv("RALPH_DB_URL", raising=False)
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    services = Services.open(demo.create_demo(tmp_path / "tidewater"))
    yield services
    services.close()


def test_the_demo_project_runs_the_rehearsal_agent(tidewater: Services) -> None:
    assert read_config(tidewater.paths).agent == "rehearsal"
    assert isinstance(adapter_for(LoopSettings.of(read_config(tidewater.paths))), RehearsalAdapter)


def test_the_demos_rehearsal_asks_suggests_flags_and_finishes_tasks_at_no_cost(tidewater: Services) -> None:
    asks_before = {ask.id for ask in tidewater.inbox.asks()}
    flags_before = {flag.id for flag in tidewater.inbox.flags()}
    events: list[LiveEvent] = []

    status = run_loop(tidewater, replace(REHEARSAL, max_iterations=3), events)

    sessions = tidewater.sessions.list(limit=3)
    assert [s.agent for s in sessions] == ["rehearsal"] * 3
    assert status.cost_usd == 0 and all(s.cost_usd == 0 for s in sessions)
    outcomes = {tidewater.tasks.get(s.task_id or 0).title: s.outcome for s in sessions}
    assert outcomes["Mark high and low water on the chart"] == SessionOutcome.DONE.value
    assert outcomes["Search stations by name and position"] == SessionOutcome.NEEDS_INPUT.value
    station = next(t for t in tidewater.tasks.list() if t.title == "Search stations by name and position")
    assert station.status is TaskStatus.NEEDS_INPUT
    new_asks = [ask for ask in tidewater.inbox.asks() if ask.id not in asks_before]
    assert {ask.task_id for ask in new_asks} >= {station.id}
    assert [flag for flag in tidewater.inbox.flags() if flag.id not in flags_before]
    verbs = {signal.verb for s in sessions for signal in tidewater.signals.for_session(s.id)}
    assert {Verb.ASK, Verb.FLAG, Verb.SUGGEST, Verb.LEARNED, Verb.DONE, Verb.PARTIAL} <= verbs
    said = [e.text for e in events if e.kind is EventKind.ASSISTANT_TEXT]
    assert any("pg_trgm" in text for text in said)
    transcript = tidewater.paths.root / (sessions[0].transcript_path or "")
    assert transcript.is_file() and "mcp__ralph__" in transcript.read_text(encoding="utf-8")


def test_a_task_the_story_does_not_script_gets_a_generic_session_closed_by_done(tidewater: Services) -> None:
    for task in tidewater.tasks.list():
        if task.status in (TaskStatus.PENDING, TaskStatus.IN_PROGRESS):
            tidewater.tasks.move(task.id, TaskStatus.SKIPPED.value, Mover.IMPORT)
    made = tidewater.tasks.create(
        feature="tide-data", discipline="backend", title="Export tides as CSV", status="pending"
    )

    run_loop(tidewater, REHEARSAL)

    assert tidewater.tasks.get(made.id).status is TaskStatus.DONE
    (session,) = [s for s in tidewater.sessions.list(limit=5) if s.task_id == made.id]
    summaries = [signal.summary or "" for signal in tidewater.signals.for_session(session.id)]
    assert any("rehearsal agent" in summary for summary in summaries)


def test_the_frozen_app_runs_the_rehearsal_as_its_own_hidden_command(monkeypatch: pytest.MonkeyPatch) -> None:
    assert rehearsal_command()[1:] == ["-P", "-m", "ralph_desk", "rehearse"]
    monkeypatch.setattr(sys, "frozen", True, raising=False)

    assert rehearsal_command() == [sys.executable, "rehearse"]


def test_the_hidden_command_says_how_it_is_used(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rehearse"]) == 2
    assert "rehearse SCRIPT MCP_CONFIG" in capsys.readouterr().err


def test_the_rehearsal_needs_no_program(tidewater: Services) -> None:
    RehearsalAdapter().check_available(REHEARSAL)  # raises nothing on a PATH without any agent


def test_the_demos_first_task_fails_its_check_then_fixes_it_at_no_cost(tidewater: Services) -> None:
    (configured,) = read_config(tidewater.paths).checks
    assert configured.name == "chart-labels" and configured.required
    settings = load_settings(tidewater.paths)  # as a run reads them: the demo's own check is trusted

    run_loop(tidewater, replace(settings, max_iterations=2, session_timeout_s=120))

    task = next(t for t in tidewater.tasks.list() if t.title == "Mark high and low water on the chart")
    first, second = reversed([s for s in tidewater.sessions.list(task_id=task.id) if s.agent == "rehearsal"])
    assert first.outcome == SessionOutcome.CHECKS_FAILED.value and second.outcome == SessionOutcome.DONE.value
    (failed,) = tidewater.checks.for_session(first.id)
    assert (failed.name, failed.status, failed.exit_code) == ("chart-labels", CheckStatus.FAILED, 1)
    assert "FAILED check_labels::low_water_12:31 - labelled above the curve" in failed.tail
    (passed,) = tidewater.checks.for_session(second.id)
    assert passed.status is CheckStatus.PASSED and "3 passed" in passed.tail
    assert FAILED_HEADING in tidewater.paths.mcp_dir.joinpath("prompt.md").read_text(encoding="utf-8")
    assert tidewater.tasks.get(task.id).status is TaskStatus.DONE
    assert first.cost_usd == second.cost_usd == 0


def test_answering_the_rehearsals_question_lets_its_task_go_on_without_asking_again(
    tidewater: Services,
) -> None:
    station = next(t for t in tidewater.tasks.list() if t.title == "Search stations by name and position")
    for task in tidewater.tasks.list():
        if task.status in (TaskStatus.PENDING, TaskStatus.IN_PROGRESS) and task.id != station.id:
            tidewater.tasks.move(task.id, TaskStatus.SKIPPED.value, Mover.IMPORT)
    run_loop(tidewater, REHEARSAL)
    assert tidewater.tasks.get(station.id).status is TaskStatus.NEEDS_INPUT
    (question,) = [ask for ask in tidewater.inbox.asks(open_only=True) if ask.task_id == station.id]

    tidewater.inbox.answer(question.id, "No: search in the application instead")
    events: list[LiveEvent] = []
    run_loop(tidewater, REHEARSAL, events)

    assert tidewater.tasks.get(station.id).status is TaskStatus.DONE
    assert not [ask for ask in tidewater.inbox.asks(open_only=True) if ask.task_id == station.id]
    said = [e.text for e in events if e.kind is EventKind.ASSISTANT_TEXT]
    assert any("The answer about pg_trgm is in" in text for text in said)
    assert not any("I need to know whether the extension may be installed" in text for text in said)
