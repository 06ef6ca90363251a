"""The loop's limits and faults: one loop per project, recovery, timeouts, stop, pause, other recipes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update

from ralph_desk.domain.checks import CheckPurpose, CheckStatus
from ralph_desk.domain.enums import LoopState, Recipe, SessionOutcome, TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.loop.agents.base import AgentUnavailableError
from ralph_desk.loop.build import build_runner
from ralph_desk.loop.lock import LoopAlreadyRunningError, LoopLock
from ralph_desk.loop.model import EventKind, LiveEvent, LoopSettings
from ralph_desk.loop.runner import LoopRunner
from ralph_desk.mcp_server.embedded import EmbeddedMcp
from ralph_desk.services.container import Services
from ralph_desk.services.sessions import LOOP_RUN_LEASE_S, this_host
from ralph_desk.store import check_runs
from ralph_desk.store.schema import LoopRunRow, TaskRow
from tests.loop.conftest import LOOP_TIMEOUT_S, Agent, StartApi, heading, run_loop, session, settings, verb
from tests.support.cli import ralph_desk_process
from tests.support.fake_model_api import Hang, Text

pytestmark = pytest.mark.slow


def state_reached(runner: LoopRunner, state: LoopState) -> asyncio.Event:
    """An event set when the runner reports `state` (its listeners run on the loop's own thread)."""
    reached = asyncio.Event()

    def listen(event: LiveEvent) -> None:
        if event.kind is EventKind.LOOP_STATE and event.text == state.value:
            reached.set()

    runner.subscribe(listen)
    return reached


def sessions_ended(runner: LoopRunner, count: int) -> asyncio.Event:
    """An event set once `count` sessions have ended."""
    ended = asyncio.Event()
    seen: list[LiveEvent] = []

    def listen(event: LiveEvent) -> None:
        if event.kind is EventKind.SESSION_ENDED:
            seen.append(event)
            if len(seen) >= count:
                ended.set()

    runner.subscribe(listen)
    return ended


def test_a_second_loop_on_the_same_project_is_refused(agent: Agent, project: Services) -> None:
    lock = LoopLock(project.paths.ralph / "loop.lock")
    lock.acquire()
    try:
        with pytest.raises(LoopAlreadyRunningError, match=f"pid {os.getpid()}"):
            run_loop(project, settings(agent))
    finally:
        lock.release()
    assert project.sessions.latest_loop_run() is None


def test_a_missing_agent_binary_is_a_clear_error_before_anything_changes(
    project: Services, tmp_path: Path
) -> None:
    task = project.tasks.create("core", "backend", "Anything")
    missing = LoopSettings(agent="claude", agent_bin=str(tmp_path / "no-such-claude"))
    with pytest.raises(AgentUnavailableError, match="no-such-claude"):
        run_loop(project, missing)
    assert project.tasks.get(task.id).status is TaskStatus.PENDING
    assert project.sessions.latest_loop_run() is None


def test_a_task_left_in_progress_by_a_dead_loop_is_recovered_at_start(
    agent: Agent, project: Services, start_api: StartApi
) -> None:
    task = project.tasks.create("core", "backend", "Interrupted job")
    project.tasks.move(task.id, TaskStatus.IN_PROGRESS.value, Mover.IMPORT)
    project.sessions.start_session("dead-session", task_id=task.id, recipe="task_execution", agent="claude")
    with project.db.write() as unit:  # the dead loop was running the task's check when it died
        check_runs.start(
            unit,
            task_id=task.id,
            session_id="dead-session",
            name="tests",
            command="pytest",
            required=True,
            purpose=CheckPurpose.SESSION,
            log_path=None,
            commit=None,
        )
    start_api(**{heading(task.id): session(verb("done", summary="finished after recovery"))})
    run_loop(project, settings(agent))
    assert project.tasks.get(task.id).status is TaskStatus.DONE
    assert project.tasks.get(task.id).stuck_count == 0
    dead = project.sessions.get("dead-session")
    assert dead.outcome == SessionOutcome.STOPPED.value and dead.ended_at is not None
    (left,) = project.checks.for_session("dead-session")
    assert left.status is CheckStatus.STOPPED


def _lapsed() -> datetime:
    """A moment older than a loop run's lease (naive UTC, as stored)."""
    return datetime.now(UTC).replace(tzinfo=None) - timedelta(seconds=LOOP_RUN_LEASE_S * 2)


def _hold(project: Services, task_id: int, host: str = "another-machine", pid: int = 4242) -> int:
    """Task `task_id` in_progress under an open session of a live loop run on `host`; the run's id."""
    run = project.sessions.start_loop_run(agent="claude")
    with project.db.write() as unit:
        unit.session.execute(update(LoopRunRow).where(LoopRunRow.id == run.id).values(host=host, pid=pid))
    project.tasks.move(task_id, TaskStatus.IN_PROGRESS.value, Mover.IMPORT)
    project.sessions.start_session(
        f"held-{task_id}", task_id=task_id, recipe="task_execution", agent="claude", loop_run_id=run.id
    )
    return run.id


def test_a_task_another_machine_is_working_on_is_left_alone_until_its_lease_lapses(
    agent: Agent, project: Services
) -> None:
    task = project.tasks.create("core", "backend", "Held elsewhere")
    run_id = _hold(project, task.id)
    status = run_loop(project, settings(agent))
    assert status.state is LoopState.COMPLETED and status.iteration == 0
    assert project.tasks.get(task.id).status is TaskStatus.IN_PROGRESS
    assert project.sessions.get(f"held-{task.id}").ended_at is None
    with project.db.write() as unit:
        unit.session.execute(update(LoopRunRow).where(LoopRunRow.id == run_id).values(heartbeat_at=_lapsed()))
    orphans = project.sessions.orphans()
    assert (orphans.task_ids, orphans.session_ids) == ([task.id], [f"held-{task.id}"])
    project.sessions.renew_lease(run_id)  # what its runner does every few seconds while it lives
    assert project.sessions.orphans().task_ids == []


def test_a_loop_run_of_this_process_is_alive_only_while_its_runner_is(project: Services) -> None:
    task = project.tasks.create("core", "backend", "Held here")
    run_id = _hold(project, task.id, host=this_host(), pid=os.getpid())
    assert project.sessions.orphans(running_here={run_id}).task_ids == []
    assert project.sessions.orphans().task_ids == [task.id]
    project.sessions.update_loop_run(run_id, state=LoopState.STOPPED.value)
    assert project.sessions.orphans(running_here={run_id}).task_ids == [task.id]


def test_a_task_in_progress_without_a_session_is_recovered_only_once_its_claim_is_older_than_a_lease(
    project: Services,
) -> None:
    task = project.tasks.create("core", "backend", "Claimed, session not started yet")
    project.tasks.move(task.id, TaskStatus.IN_PROGRESS.value, Mover.IMPORT)
    assert project.sessions.orphans().task_ids == []
    with project.db.write() as unit:
        unit.session.execute(update(TaskRow).where(TaskRow.id == task.id).values(started_at=_lapsed()))
    assert project.sessions.orphans().task_ids == [task.id]


def test_the_runs_state_is_written_off_the_event_loop_and_recorded_when_the_run_returns(
    agent: Agent, project: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    writers: list[str] = []
    write = project.sessions.update_loop_run

    def noting_the_thread(loop_run_id: int, **changes: Any) -> Any:
        writers.append(threading.current_thread().name)
        return write(loop_run_id, **changes)

    monkeypatch.setattr(project.sessions, "update_loop_run", noting_the_thread)

    status = run_loop(project, settings(agent))

    assert status.loop_run_id is not None
    assert project.sessions.get_loop_run(status.loop_run_id).state == LoopState.COMPLETED.value
    assert writers and threading.main_thread().name not in writers


def test_a_session_over_its_time_limit_is_ended_and_counted_stuck(
    agent: Agent, project: Services, start_api: StartApi
) -> None:
    task = project.tasks.create("core", "backend", "Never answers")
    start_api(**{heading(task.id): [Hang()]})
    run_loop(project, settings(agent, session_timeout_s=3, max_iterations=1))
    reloaded = project.tasks.get(task.id)
    assert reloaded.status is TaskStatus.PENDING and reloaded.stuck_count == 1
    (recorded,) = project.sessions.list(task_id=task.id)
    assert recorded.error == "timed out" and recorded.outcome == SessionOutcome.STUCK.value


def test_a_human_stop_ends_the_agent_without_counting_stuck(
    agent: Agent, project: Services, start_api: StartApi
) -> None:
    task = project.tasks.create("core", "backend", "Stop me")
    api = start_api(**{heading(task.id): [Hang()]})

    async def stop_when_waiting(runner: LoopRunner) -> None:
        await asyncio.to_thread(api.wait_turns, 1, 60, heading(task.id))
        runner.stop()

    status = run_loop(project, settings(agent), runner_hook=stop_when_waiting)
    reloaded = project.tasks.get(task.id)
    assert reloaded.status is TaskStatus.PENDING and reloaded.stuck_count == 0
    (recorded,) = project.sessions.list(task_id=task.id)
    assert recorded.outcome == SessionOutcome.STOPPED.value
    assert status.state is LoopState.STOPPED


def test_a_loop_stopped_mid_session_leaves_no_helper_task_pending_when_it_returns(
    agent: Agent, project: Services, start_api: StartApi
) -> None:
    task = project.tasks.create("core", "backend", "Stop me, then quit")
    api = start_api(**{heading(task.id): [Hang()]})

    async def main() -> list[str]:
        embedded = EmbeddedMcp(project)
        await embedded.start()
        runner = build_runner(project, embedded, settings(agent))

        async def stop_when_waiting() -> None:
            await asyncio.to_thread(api.wait_turns, 1, 60, heading(task.id))
            runner.stop()

        stopper = asyncio.create_task(stop_when_waiting())
        try:
            status = await asyncio.wait_for(runner.run(), LOOP_TIMEOUT_S)
            await asyncio.wait_for(stopper, LOOP_TIMEOUT_S)
            assert status.state is LoopState.STOPPED
            # What an app quitting right now would find still pending (its "Task was destroyed" warnings).
            return [t.get_name() for t in asyncio.all_tasks() if t.get_name().startswith("ralph-loop-")]
        finally:
            await embedded.stop()

    assert asyncio.run(main()) == []


def test_pause_holds_the_loop_after_the_current_session_until_resumed(
    agent: Agent, project: Services, start_api: StartApi
) -> None:
    first = project.tasks.create("core", "backend", "First", priority="high")
    second = project.tasks.create("core", "backend", "Second")
    start_api(
        **{
            heading(first.id): session(verb("done", summary="1")),
            heading(second.id): session(verb("done", summary="2")),
        }
    )
    events: list[LiveEvent] = []

    async def pause_then_resume(runner: LoopRunner) -> None:
        paused = state_reached(runner, LoopState.PAUSED)
        first_started = asyncio.Event()
        runner.subscribe(lambda e: first_started.set() if e.kind is EventKind.SESSION_STARTED else None)
        await asyncio.wait_for(first_started.wait(), 120)
        runner.pause()
        await asyncio.wait_for(paused.wait(), 120)
        assert project.tasks.get(first.id).status is TaskStatus.DONE
        assert project.tasks.get(second.id).status is TaskStatus.PENDING
        runner.resume()

    run_loop(project, settings(agent), events, runner_hook=pause_then_resume)
    states = [e.text for e in events if e.kind is EventKind.LOOP_STATE]
    assert states.index(LoopState.PAUSED.value) < len(states) - 1
    assert project.tasks.get(second.id).status is TaskStatus.DONE


def test_a_waiting_loop_wakes_when_a_question_is_answered(
    agent: Agent, project: Services, start_api: StartApi
) -> None:
    task = project.tasks.create("core", "backend", "Needs a decision")
    script = [
        *session(
            verb("ask", question="Which chart library?", options=["uPlot", "Chart.js"], blocking=True),
            verb("partial", summary="data ready", remaining="draw the chart"),
        ),
        *session(verb("done", summary="chart drawn")),
    ]
    api = start_api(**{heading(task.id): script})

    async def answer_when_waiting(runner: LoopRunner) -> None:
        waiting = state_reached(runner, LoopState.WAITING)
        two_sessions = sessions_ended(runner, 2)
        await asyncio.wait_for(waiting.wait(), 120)
        (ask,) = project.inbox.asks()
        project.inbox.answer(ask.id, "uPlot")
        await asyncio.wait_for(two_sessions.wait(), 120)
        runner.stop()

    run_loop(project, settings(agent), runner_hook=answer_when_waiting, exit_when_idle=False)
    assert "ANSWER to your question 'Which chart library?': uPlot" in api.user_text(2)


def test_an_opus_review_runs_after_every_n_tasks_done_in_a_feature(
    agent: Agent, project: Services, start_api: StartApi
) -> None:
    task = project.tasks.create("core", "backend", "Reviewed work")
    api = start_api(
        [Text("Reviewed: all good.")], **{heading(task.id): session(verb("done", summary="work"))}
    )
    run_loop(project, settings(agent, opus_review_every=1))
    reviews = [s for s in project.sessions.list() if s.recipe == Recipe.OPUS_REVIEW.value]
    assert len(reviews) == 1 and reviews[0].feature == "core"
    review_request = next(i for i in range(len(api.requests)) if "# Review of a feature" in api.user_text(i))
    offered = set(api.offered_tools(review_request))
    assert "mcp__ralph__get_project_progress" in offered and "mcp__ralph__done" not in offered


def test_the_understand_session_writes_the_codebase_map_read_only(
    agent: Agent, project: Services, start_api: StartApi
) -> None:
    start_api([Text("# Codebase map\n\nOne README, nothing else yet.")])
    run = ralph_desk_process(
        "session", "--root", str(project.paths.root), "--recipe", "understand", *agent.cli
    )
    assert run.returncode == 0, run.stderr
    assert project.paths.codebase_map.read_text().startswith("# Codebase map")
    (recorded,) = project.sessions.list()
    assert recorded.recipe == "understand"


def test_cli_dry_run_shows_tasks_prompt_and_config_and_starts_nothing(project: Services) -> None:
    task = project.tasks.create("core", "backend", "Dry run target")
    run = ralph_desk_process("run", "--root", str(project.paths.root), "--dry-run", "--json")
    assert run.returncode == 0, run.stderr
    document = json.loads(run.stdout)
    assert [t["id"] for t in document["tasksToAttempt"]] == [task.id]
    assert heading(task.id) in document["prompt"]
    assert document["mcpConfig"]["mcpServers"]["ralph"]["type"] == "http"
    assert set(document["tools"]) == {
        "done",
        "partial",
        "stuck",
        "ask",
        "flag",
        "learned",
        "suggest",
        "blocked",
    }
    assert project.tasks.get(task.id).status is TaskStatus.PENDING
    assert project.sessions.list() == []


def test_cli_run_works_through_the_queue_headless(
    agent: Agent, project: Services, start_api: StartApi
) -> None:
    task = project.tasks.create("core", "backend", "Headless job")
    start_api(**{heading(task.id): session(verb("done", summary="headless"))})
    run = ralph_desk_process(
        "run", "--root", str(project.paths.root), *agent.cli, "--exit-when-idle", "--json"
    )
    assert run.returncode == 0, run.stderr
    finished = json.loads(run.stdout.strip().splitlines()[-1])
    assert finished["event"] == "finished" and finished["completed"] == 1
    assert project.tasks.get(task.id).status is TaskStatus.DONE


def test_the_app_killed_mid_loop_leaves_a_task_the_next_start_recovers(
    agent: Agent, project: Services, start_api: StartApi
) -> None:
    task = project.tasks.create("core", "backend", "Survives a crash")
    api = start_api(**{heading(task.id): [Hang(), *session(verb("done", summary="after the crash"))]})
    loop = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ralph_desk",
            "run",
            "--root",
            str(project.paths.root),
            *agent.cli,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )
    try:
        api.wait_turns(1, timeout=120, key=heading(task.id))
        assert project.tasks.get(task.id).status is TaskStatus.IN_PROGRESS
        loop.kill()
        loop.wait(timeout=30)
    finally:
        if loop.poll() is None:
            loop.kill()
    api.release()  # the orphaned agent gets its answer and exits on its own
    run = ralph_desk_process("run", "--root", str(project.paths.root), *agent.cli, "--exit-when-idle")
    assert run.returncode == 0, run.stderr
    assert project.tasks.get(task.id).status is TaskStatus.DONE
    assert project.tasks.get(task.id).stuck_count == 0
