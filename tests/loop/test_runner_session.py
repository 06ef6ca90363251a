"""One session of `LoopRunner.run_session`, outside a loop run: what the agent did decides the outcome."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from ralph_desk.domain.enums import SessionOutcome, TaskStatus
from ralph_desk.loop import branches
from ralph_desk.loop.build import build_runner
from ralph_desk.loop.model import EventKind, LiveEvent
from ralph_desk.loop.planner import plan_next_task
from ralph_desk.loop.runner import LoopRunner, SessionResult
from ralph_desk.loop.transcript import Transcript
from ralph_desk.mcp_server.embedded import EmbeddedMcp
from ralph_desk.services.container import Services
from tests.loop.conftest import LOOP_TIMEOUT_S, Agent, StartApi, heading, session, settings, stand_in, verb
from tests.support.fake_model_api import Hang, HttpError, Text

pytestmark = pytest.mark.slow

WhileRunning = Callable[[LoopRunner], Coroutine[Any, Any, None]]


def run_session(
    services: Services, agent: Agent, events: list[LiveEvent], while_running: WhileRunning | None = None
) -> SessionResult:
    """Claim the next task and run its one session with the embedded server, nothing else of a loop."""

    async def main() -> SessionResult:
        embedded = EmbeddedMcp(services)
        await embedded.start()
        runner = build_runner(services, embedded, settings(agent))
        runner.subscribe(events.append)
        plan = plan_next_task(services, runner.settings)
        assert plan is not None
        helper = asyncio.create_task(while_running(runner)) if while_running else None
        try:
            result = await asyncio.wait_for(runner.run_session(plan), LOOP_TIMEOUT_S)
            if helper is not None:
                await asyncio.wait_for(helper, LOOP_TIMEOUT_S)
            return result
        finally:
            await embedded.stop()

    return asyncio.run(main())


def test_a_session_that_edits_and_calls_partial_requeues_its_task_with_the_edit_recorded(
    agent: Agent, project: Services, start_api: StartApi
) -> None:
    task = project.tasks.create("core", "backend", "Tide parser")
    worktree = project.workspaces.prepare(task.id, task.title)  # where the loop will run its sessions
    assert worktree is not None
    edited = worktree.path / "tide.py"
    start_api(
        **{
            heading(task.id): session(
                ("Write", {"file_path": str(edited), "content": "HIGH_WATER = 4.2\n"}),
                verb("partial", summary="constants written", remaining="parse the table"),
            )
        }
    )
    events: list[LiveEvent] = []
    result = run_session(project, agent, events)
    assert result.outcome is SessionOutcome.REQUEUED and result.exit_code == 0
    assert result.decision is not None and result.decision.status is TaskStatus.PENDING
    assert result.changed_files == ["tide.py"] and edited.read_text() == "HIGH_WATER = 4.2\n"
    assert not (project.paths.root / "tide.py").exists()  # the person's checkout is not touched
    assert result.summary.turns >= 2 and result.summary.cost_usd > 0
    (recorded,) = project.sessions.list(task_id=task.id)
    assert (recorded.closing_verb, recorded.outcome) == ("partial", SessionOutcome.REQUEUED.value)
    assert [signal.remaining for signal in project.signals.for_task(task.id)] == ["parse the table"]
    calls = [e.data["tool"] for e in events if e.kind is EventKind.TOOL_CALL]
    assert calls == ["Write", "partial"]
    assert events[0].kind is EventKind.SESSION_STARTED
    assert events[-1].kind is EventKind.SESSION_ENDED and events[-1].text == SessionOutcome.REQUEUED.value


def test_a_session_that_calls_no_verb_is_stuck(agent: Agent, project: Services, start_api: StartApi) -> None:
    task = project.tasks.create("core", "backend", "Silent agent")
    start_api(**{heading(task.id): [Text("I looked around and did nothing.")]})
    result = run_session(project, agent, [])
    assert result.outcome is SessionOutcome.STUCK and result.decision is not None
    assert result.exit_code == 0 and result.summary.result_text == "I looked around and did nothing."
    reloaded = project.tasks.get(task.id)
    assert reloaded.status is TaskStatus.PENDING and reloaded.stuck_count == 1
    (recorded,) = project.sessions.list(task_id=task.id)
    assert recorded.closing_verb is None and recorded.outcome == SessionOutcome.STUCK.value


def test_an_agent_that_exits_with_an_error_is_stuck_with_its_error_recorded(
    project: Services, start_api: StartApi
) -> None:
    task = project.tasks.create("core", "backend", "Broken API")
    # Claude Code does not end on this 400 (it asks again and gets the fallback answer); the stand-in exits 1.
    start_api(**{heading(task.id): [HttpError(400, message="the prompt is malformed")]})
    result = run_session(project, stand_in(), [])
    assert result.exit_code == 1 and result.summary.is_error
    assert result.outcome is SessionOutcome.STUCK
    (recorded,) = project.sessions.list(task_id=task.id)
    assert recorded.error is not None and "the prompt is malformed" in recorded.error
    assert project.tasks.get(task.id).stuck_count == 1


def test_a_session_stopped_while_the_agent_waits_is_stopped_not_stuck(
    agent: Agent, project: Services, start_api: StartApi
) -> None:
    task = project.tasks.create("core", "backend", "Endless thinking")
    api = start_api(**{heading(task.id): [Hang()]})

    async def stop_when_waiting(runner: LoopRunner) -> None:
        await asyncio.to_thread(api.wait_turns, 1, 60, heading(task.id))
        runner.stop()

    result = run_session(project, agent, [], stop_when_waiting)
    assert result.outcome is SessionOutcome.STOPPED and result.stopped
    assert result.exit_code not in (0, None)  # ended by a signal, or by its own handler of one
    reloaded = project.tasks.get(task.id)
    assert reloaded.status is TaskStatus.PENDING and reloaded.stuck_count == 0
    (recorded,) = project.sessions.list(task_id=task.id)
    assert recorded.outcome == SessionOutcome.STOPPED.value


def test_a_session_whose_merge_fails_still_ends_recorded_and_announced(
    agent: Agent, project: Services, start_api: StartApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = project.tasks.create("core", "backend", "Tide parser")
    start_api(**{heading(task.id): session(verb("partial", summary="started", remaining="the rest"))})

    def merge_fails(*_args: object) -> TaskStatus:
        raise RuntimeError("the merge broke")

    monkeypatch.setattr(branches, "after_review_gate", merge_fails)
    events: list[LiveEvent] = []

    with pytest.raises(RuntimeError, match="the merge broke"):  # the error is not hidden
        run_session(project, agent, events)

    # Before, the row stayed 'running' until the next start, and no end was announced.
    (recorded,) = project.sessions.list(task_id=task.id)
    assert recorded.outcome == SessionOutcome.FAILED.value and recorded.ended_at is not None
    assert recorded.error is not None and "the merge broke" in recorded.error
    assert events[-1].kind is EventKind.SESSION_ENDED and events[-1].session_id == recorded.id


def test_a_session_cancelled_while_its_end_is_recorded_still_ends_announced_and_off_the_running_list(
    agent: Agent, project: Services, start_api: StartApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = project.tasks.create("core", "backend", "Tide parser")
    start_api(**{heading(task.id): session(verb("partial", summary="started", remaining="the rest"))})
    entered, release = threading.Event(), threading.Event()
    close = Transcript.close

    def held_close(transcript: Transcript, *args: Any, **kwargs: Any) -> Any:
        entered.set()
        release.wait(LOOP_TIMEOUT_S)
        return close(transcript, *args, **kwargs)

    monkeypatch.setattr(Transcript, "close", held_close)
    events: list[LiveEvent] = []

    async def main() -> LoopRunner:
        embedded = EmbeddedMcp(project)
        await embedded.start()
        try:
            runner = build_runner(project, embedded, settings(agent))
            runner.subscribe(events.append)
            plan = plan_next_task(project, runner.settings)
            assert plan is not None
            running = asyncio.create_task(runner.run_session(plan))
            assert await asyncio.to_thread(entered.wait, LOOP_TIMEOUT_S)
            running.cancel()  # while the end is being recorded on its thread
            release.set()
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(running, LOOP_TIMEOUT_S)
            return runner
        finally:
            release.set()
            await embedded.stop()

    runner = asyncio.run(main())

    # Before, the cancel skipped the ended event and left the session on the running list.
    (recorded,) = project.sessions.list(task_id=task.id)
    assert recorded.outcome != SessionOutcome.RUNNING.value and recorded.ended_at is not None
    assert events[-1].kind is EventKind.SESSION_ENDED and events[-1].session_id == recorded.id
    assert runner.status.running == {} and runner.status.current_session_id is None
