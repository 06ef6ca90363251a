"""Many agents at once: the loop keeps `parallel` sessions running, each task once, none sharing a file, and
a stop ends them all. The stand-in agents meet at a rendezvous folder, so that agents running at once see
each other, and each works a while (as a real session does)."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from ralph_desk.domain.endpoints import EndpointIssuer
from ralph_desk.domain.enums import LoopState, MergeStrategy, Recipe, TaskStatus
from ralph_desk.domain.records import Task
from ralph_desk.domain.session import SessionContext
from ralph_desk.loop.control import LoopController
from ralph_desk.loop.model import EventKind, LiveEvent
from ralph_desk.loop.runner import LoopRunner
from ralph_desk.mcp_server.embedded import EmbeddedMcp
from ralph_desk.mcp_server.server import build_server
from ralph_desk.project import update_config
from ralph_desk.services.container import Services
from tests.loop.conftest import StartApi, heading, run_loop, session, settings, stand_in, use_agent, verb
from tests.support import stand_in_agent
from tests.support.fake_model_api import Hang, HttpError, Turn
from tests.support.git_repo import fsck_ok, git
from tests.support.review_project import read_tip

pytestmark = pytest.mark.slow

PARALLEL = 4
HOLD_S = 2.0
STOP_LIMIT_S = 10.0


def meet(monkeypatch: pytest.MonkeyPatch, folder: Path, count: int, hold_s: float) -> None:
    """Every agent leaves a file in `folder`, waits until `count` have, then works `hold_s` longer.

    A folder every session writes is what a sandbox never gives: these tests run their agents unconfined
    (tests/loop/test_sandbox_e2e.py holds the confined ones)."""
    monkeypatch.setenv(stand_in_agent.RENDEZVOUS_ENV, f"{folder}:{count}:{hold_s}")


def write_and_finish(task: Task) -> list[Turn]:
    """The session of one task: write a file of its own, then done."""
    path = f"notes/task-{task.id}.txt"
    return session(
        ("Write", {"file_path": path, "content": f"{task.title}\n"}), verb("done", summary="wrote it")
    )


def running_over_time(events: list[LiveEvent]) -> tuple[int, dict[int | None, list[int]]]:
    """The most sessions running at once, and each task's session spans as indexes into the event order."""
    running: set[str] = set()
    most = 0
    spans: dict[int | None, list[int]] = {}
    for index, event in enumerate(events):
        if event.kind is EventKind.SESSION_STARTED:
            running.add(event.session_id or "")
            spans.setdefault(event.data.get("task_id"), []).append(index)
        elif event.kind is EventKind.SESSION_ENDED:
            running.discard(event.session_id or "")
            spans.setdefault(event.data.get("task_id"), []).append(index)
        most = max(most, len(running))
    return most, spans


def test_eight_tasks_run_four_at_a_time_each_once_and_merge_linearly_after_approval(
    project: Services, start_api: StartApi, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    root = project.paths.root
    update_config(project.paths, review_gate=True, merge_strategy=MergeStrategy.SQUASH.value)
    features = ["core", "charts", "feeds", "maps"]
    for name in features[1:]:
        project.features.create(name, name.capitalize())
    tasks = [project.tasks.create(features[n % 4], "backend", f"Note {n}") for n in range(8)]
    start_api(**{heading(task.id): write_and_finish(task) for task in tasks})
    meet(monkeypatch, tmp_path / "arrivals", 3, HOLD_S)
    events: list[LiveEvent] = []

    status = run_loop(
        project, settings(stand_in(), sandbox=False, parallel=PARALLEL, max_iterations=None), events
    )

    most, _ = running_over_time(events)
    assert 3 <= most <= PARALLEL
    assert status.state is LoopState.COMPLETED and status.iteration == len(tasks)
    sessions = Counter(session.task_id for session in project.sessions.list(limit=100))
    assert sessions == Counter(task.id for task in tasks)  # each task ran once
    assert [project.tasks.get(task.id).status for task in tasks] == [TaskStatus.IN_REVIEW] * len(tasks)

    approvals = [
        threading.Thread(target=project.reviews.approve, args=(task.id, read_tip(project, task.id)))
        for task in tasks
    ]
    for thread in approvals:
        thread.start()
    for thread in approvals:
        thread.join(timeout=120)
    assert [project.tasks.get(task.id).status for task in tasks] == [TaskStatus.DONE] * len(tasks)
    for task in tasks:
        assert git(root, "show", f"HEAD:notes/task-{task.id}.txt") == task.title
    assert git(root, "rev-list", "--merges", "HEAD") == ""  # squash: one straight line
    assert int(git(root, "rev-list", "--count", "HEAD")) == 1 + len(tasks)


def test_two_tasks_sharing_a_context_file_never_run_at_once(
    project: Services, start_api: StartApi, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    first = project.tasks.create("core", "backend", "Tide chart", context_files=["src/chart.py"])
    second = project.tasks.create("core", "backend", "Tide colours", context_files=["./src/chart.py"])
    others = [
        project.tasks.create("core", "backend", f"Other {n}", context_files=[f"src/{n}.py"]) for n in range(2)
    ]
    tasks = [first, second, *others]
    start_api(**{heading(task.id): write_and_finish(task) for task in tasks})
    meet(monkeypatch, tmp_path / "arrivals", 3, 0.5)
    events: list[LiveEvent] = []

    run_loop(project, settings(stand_in(), sandbox=False, parallel=PARALLEL), events)

    most, spans = running_over_time(events)
    assert most == 3  # the second chart task waited while the other three ran
    (start_one, end_one), (start_two, end_two) = spans[first.id], spans[second.id]
    assert end_one < start_two or end_two < start_one
    assert all(project.tasks.get(task.id).status is TaskStatus.DONE for task in tasks)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_stopping_four_running_sessions_ends_every_agent_and_returns_every_task(
    project: Services, start_api: StartApi
) -> None:
    root = project.paths.root
    base_before = git(root, "rev-parse", "HEAD")
    tasks = [project.tasks.create("core", "backend", f"Hold {n}") for n in range(PARALLEL)]
    api = start_api(**{heading(task.id): [Hang()] for task in tasks})
    took: list[float] = []
    pids: list[int] = []

    async def stop_when_all_wait(runner: LoopRunner) -> None:
        stopped = asyncio.Event()
        runner.subscribe(lambda event: stopped.set() if event.text == LoopState.STOPPED.value else None)
        for task in tasks:
            await asyncio.to_thread(api.wait_turns, 1, 120, heading(task.id))
        pids.extend(process.pid for process in runner.processes.running.values())
        started = time.monotonic()
        runner.stop()
        await asyncio.wait_for(stopped.wait(), STOP_LIMIT_S * 3)
        took.append(time.monotonic() - started)

    status = run_loop(
        project, settings(stand_in(), sandbox=False, parallel=PARALLEL), runner_hook=stop_when_all_wait
    )

    assert status.state is LoopState.STOPPED
    assert len(pids) == PARALLEL and not any(_alive(pid) for pid in pids)
    assert took and took[0] <= STOP_LIMIT_S
    assert [project.tasks.get(task.id).status for task in tasks] == [TaskStatus.PENDING] * PARALLEL
    assert git(root, "rev-parse", "HEAD") == base_before
    assert fsck_ok(root)
    assert not list((root / ".git").rglob("*.lock"))


def test_one_agent_crashing_never_stops_the_others(
    project: Services, start_api: StartApi, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    crashing = project.tasks.create("core", "backend", "Crash")
    others = [project.tasks.create("core", "backend", f"Steady {n}") for n in range(3)]
    scripts = {heading(task.id): write_and_finish(task) for task in others}
    start_api(**scripts, **{heading(crashing.id): [HttpError(500, "the model fell over")]})
    meet(monkeypatch, tmp_path / "arrivals", 4, 0)
    events: list[LiveEvent] = []

    run_loop(project, settings(stand_in(), sandbox=False, parallel=PARALLEL, max_iterations=4), events)

    assert running_over_time(events)[0] == PARALLEL
    assert [project.tasks.get(task.id).status for task in others] == [TaskStatus.DONE] * len(others)
    crashed = project.tasks.get(crashing.id)
    assert crashed.status is TaskStatus.PENDING and crashed.stuck_count == 1


def test_max_iterations_counts_the_sessions_started_across_the_pool(
    project: Services, start_api: StartApi, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    tasks = [project.tasks.create("core", "backend", f"Note {n}") for n in range(6)]
    start_api(**{heading(task.id): write_and_finish(task) for task in tasks})
    meet(monkeypatch, tmp_path / "arrivals", 3, 0)

    status = run_loop(project, settings(stand_in(), sandbox=False, parallel=PARALLEL, max_iterations=5))

    assert len(project.sessions.list(limit=100)) == 5 == status.iteration
    assert "maximum of 5 iterations" in (status.stop_reason or "")
    assert project.tasks.count_by_status()[TaskStatus.PENDING.value] == 1


def test_no_new_session_starts_once_the_budget_left_would_not_cover_the_average_session(
    project: Services, start_api: StartApi
) -> None:
    tasks = [project.tasks.create("core", "backend", f"Note {n}") for n in range(5)]
    start_api(**{heading(task.id): write_and_finish(task) for task in tasks})
    budget = 0.05  # each session costs about $0.02: two at once, then $0.01 left is not enough for one more

    status = run_loop(project, settings(stand_in(), sandbox=False, parallel=2, max_cost_usd=budget))

    costs = [session.cost_usd or 0.0 for session in project.sessions.list(limit=100)]
    assert len(costs) == 2 and all(0.01 < cost < budget / 2 for cost in costs)
    assert status.state is LoopState.COMPLETED and "budget" in (status.stop_reason or "")
    assert status.cost_usd <= budget


def test_ralph_run_with_parallel_runs_sessions_at_once_and_ralph_status_lists_each(
    project: Services, start_api: StartApi
) -> None:
    use_agent(project, stand_in())
    tasks = [project.tasks.create("core", "backend", f"Hold {n}") for n in range(2)]
    api = start_api(**{heading(task.id): [Hang()] for task in tasks})

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        hosts: list[EmbeddedMcp] = []

        async def issuer() -> EndpointIssuer:
            if not hosts:
                hosts.append(EmbeddedMcp(project))
                await hosts[0].start()
            return hosts[0]

        controller = LoopController(project, issuer)
        server = build_server(project, SessionContext(recipe=Recipe.IDE), loop=controller)
        try:
            async with Client(server, mode="legacy") as client:
                started = await client.call_tool("ralph_run", {"parallel": 2, "allow_edits": True})
                assert not started.is_error, started.content
                for task in tasks:
                    await asyncio.to_thread(api.wait_turns, 1, 120, heading(task.id))
                status = await client.call_tool("ralph_status", {})
                stopped = await client.call_tool("ralph_stop", {})
                assert controller.task is not None
                await asyncio.wait_for(asyncio.shield(controller.task), 120)
                return status.structured_content or {}, stopped.structured_content or {}
        finally:
            for host in hosts:
                await host.stop()

    status, stopped = asyncio.run(main())

    assert status["running"] is True
    listed = status["runningSessions"]
    assert sorted(item["taskId"] for item in listed) == [task.id for task in tasks]
    assert all(item["sessionId"].startswith("20") for item in listed)
    assert stopped["success"] is True
    assert [project.tasks.get(task.id).status for task in tasks] == [TaskStatus.PENDING] * 2


def test_ralph_run_refuses_a_parallel_below_one_naming_what_is_allowed(project: Services) -> None:
    controller = LoopController(project, lambda: None)  # type: ignore[arg-type,return-value]
    server = build_server(project, SessionContext(recipe=Recipe.IDE), loop=controller)

    async def main() -> Any:
        async with Client(server, mode="legacy") as client:
            return await client.call_tool("ralph_run", {"parallel": 0})

    result = asyncio.run(main())

    assert result.is_error
    text = " ".join(getattr(block, "text", "") for block in result.content)
    assert "parallel" in text and "1" in text


def test_pause_lets_the_running_sessions_finish_and_starts_no_new_one(
    project: Services, start_api: StartApi
) -> None:
    running = [project.tasks.create("core", "backend", f"Running {n}", priority="high") for n in range(2)]
    waiting = [project.tasks.create("core", "backend", f"Waiting {n}", priority="low") for n in range(2)]
    api = start_api(
        **{heading(task.id): [Hang()] for task in running},
        **{heading(task.id): write_and_finish(task) for task in waiting},
    )
    events: list[LiveEvent] = []

    async def pause_then_release(runner: LoopRunner) -> None:
        paused = asyncio.Event()
        runner.subscribe(lambda event: paused.set() if event.text == LoopState.PAUSED.value else None)
        for task in running:
            await asyncio.to_thread(api.wait_turns, 1, 120, heading(task.id))
        runner.pause()
        api.release()  # the running sessions end on their own (without a closing verb)
        await asyncio.wait_for(paused.wait(), 120)
        runner.stop()

    status = run_loop(
        project, settings(stand_in(), sandbox=False, parallel=2), events, runner_hook=pause_then_release
    )

    assert status.state is LoopState.STOPPED
    started = [event.data.get("task_id") for event in events if event.kind is EventKind.SESSION_STARTED]
    assert sorted(started) == [task.id for task in running]
    paused_at = next(i for i, event in enumerate(events) if event.text == LoopState.PAUSED.value)
    ended = [i for i, event in enumerate(events) if event.kind is EventKind.SESSION_ENDED]
    assert len(ended) == 2 and max(ended) < paused_at  # paused once both had finished
    assert [project.tasks.get(task.id).status for task in waiting] == [TaskStatus.PENDING] * 2


def test_a_rate_limit_holds_new_starts_until_its_time_then_they_resume(
    project: Services, start_api: StartApi
) -> None:
    limited = project.tasks.create("core", "backend", "Limited", priority="high")
    others = [project.tasks.create("core", "backend", f"Other {n}") for n in range(3)]
    start_api(
        **{heading(limited.id): [HttpError(429), *write_and_finish(limited)]},
        **{heading(task.id): write_and_finish(task) for task in others},
    )
    events: list[LiveEvent] = []

    run_loop(project, settings(stand_in(), sandbox=False, parallel=2, max_iterations=None), events)

    states = [(i, event.text) for i, event in enumerate(events) if event.kind is EventKind.LOOP_STATE]
    held = next(i for i, text in states if text == LoopState.RATE_LIMITED.value)
    resumed = next(i for i, text in states if i > held and text == LoopState.RUNNING.value)
    starts = [i for i, event in enumerate(events) if event.kind is EventKind.SESSION_STARTED]
    assert not [i for i in starts if held < i < resumed]  # no session started while held
    assert [i for i in starts if i > resumed]  # new starts resumed
    assert all(project.tasks.get(task.id).status is TaskStatus.DONE for task in [limited, *others])
    assert len(project.sessions.list(task_id=limited.id)) == 2
