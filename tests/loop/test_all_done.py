"""A loop that may wait (the window's): it ends once all work is done, and says once why it waits."""

from __future__ import annotations

import asyncio

import pytest

from ralph_desk.domain.enums import LoopState, TaskStatus
from ralph_desk.loop.model import ALL_DONE, EventKind, LiveEvent
from ralph_desk.loop.runner import LoopRunner
from ralph_desk.services.container import Services
from tests.loop.conftest import StartApi, heading, run_loop, session, settings, stand_in, verb

pytestmark = pytest.mark.slow

WAIT_S = 120


def waiting_reasons(events: list[LiveEvent]) -> list[str]:
    """The reasons of the loop's WAITING states, in order, one per state event."""
    return [
        str(event.data.get("reason"))
        for event in events
        if event.kind is EventKind.LOOP_STATE and event.text == LoopState.WAITING.value
    ]


def test_the_loop_ends_by_itself_once_all_work_is_done_and_says_so(
    project: Services, start_api: StartApi
) -> None:
    task = project.tasks.create("core", "backend", "Only task")
    start_api(**{heading(task.id): session(verb("done", summary="finished"))})
    events: list[LiveEvent] = []

    status = run_loop(project, settings(stand_in()), events, exit_when_idle=False)

    assert project.tasks.get(task.id).status is TaskStatus.DONE
    assert (status.state, status.stop_reason) == (LoopState.COMPLETED, ALL_DONE)
    assert waiting_reasons(events) == []
    run = project.sessions.latest_loop_run()
    assert run is not None and run.state == LoopState.COMPLETED.value and run.stop_reason == ALL_DONE


def test_set_to_wait_for_new_tasks_the_loop_waits_and_takes_a_new_one(
    project: Services, start_api: StartApi
) -> None:
    first = project.tasks.create("core", "backend", "First")
    second_title = "Second, added while the loop waits"
    events: list[LiveEvent] = []
    later = heading(first.id + 1)
    start_api(
        **{
            heading(first.id): session(verb("done", summary="one")),
            later: session(verb("done", summary="two")),
        }
    )

    async def add_a_task_when_waiting(runner: LoopRunner) -> None:
        waiting = asyncio.Event()
        ended: list[LiveEvent] = []
        both = asyncio.Event()

        def listen(event: LiveEvent) -> None:
            if event.kind is EventKind.LOOP_STATE and event.text == LoopState.WAITING.value:
                waiting.set()
            if event.kind is EventKind.SESSION_ENDED:
                ended.append(event)
                if len(ended) == 2:
                    both.set()

        runner.subscribe(listen)
        await asyncio.wait_for(waiting.wait(), WAIT_S)
        await asyncio.to_thread(project.tasks.create, "core", "backend", second_title)
        await asyncio.wait_for(both.wait(), WAIT_S)
        runner.stop()

    status = run_loop(
        project,
        settings(stand_in(), when_all_done="wait"),
        events,
        runner_hook=add_a_task_when_waiting,
        exit_when_idle=False,
    )

    assert status.stop_reason == "stopped by the human"
    second = next(task for task in project.tasks.list() if task.title == second_title)
    assert project.tasks.get(second.id).status is TaskStatus.DONE
    assert waiting_reasons(events)[0] == "nothing is runnable — waiting for new tasks"


def test_the_waiting_reason_names_what_waits_and_is_written_once_per_change_of_reason(
    project: Services, start_api: StartApi
) -> None:
    task = project.tasks.create("core", "backend", "Needs a decision")
    start_api(
        **{
            heading(task.id): session(
                verb("ask", question="Which chart library?", options=["uPlot", "Chart.js"], blocking=True),
                verb("partial", summary="data ready", remaining="draw the chart"),
            )
        }
    )
    events: list[LiveEvent] = []

    async def wake_it_while_it_waits(runner: LoopRunner) -> None:
        reasons: list[str] = []
        first, second = asyncio.Event(), asyncio.Event()

        def listen(event: LiveEvent) -> None:
            if event.kind is EventKind.LOOP_STATE and event.text == LoopState.WAITING.value:
                reasons.append(str(event.data.get("reason")))
                (first if len(reasons) == 1 else second).set()

        runner.subscribe(listen)
        await asyncio.wait_for(first.wait(), WAIT_S)
        for _ in range(5):  # the window wakes a waiting loop on every change it sees; a comment runs nothing
            runner.wake()
            await asyncio.to_thread(project.comments.add, task.id, "person", "noted")
        await asyncio.to_thread(
            project.tasks.create, "core", "backend", "A suggestion", status=TaskStatus.DRAFT.value
        )
        await asyncio.wait_for(second.wait(), WAIT_S)
        runner.wake()
        await asyncio.to_thread(project.comments.add, task.id, "person", "still noted")
        runner.stop()

    run_loop(project, settings(stand_in()), events, runner_hook=wake_it_while_it_waits, exit_when_idle=False)

    assert waiting_reasons(events) == [
        "nothing is runnable — waiting for 1 question to answer",
        "nothing is runnable — waiting for 1 question to answer · 1 suggested task to approve",
    ]
