"""Rate limits: the loop waits, not counting stuck, doubling its own wait up to a cap; a reset time wins."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime, timedelta

import pytest

from ralph_desk.domain.enums import LoopState, TaskStatus
from ralph_desk.loop.limits import Backoff
from ralph_desk.loop.model import EventKind, LiveEvent
from ralph_desk.loop.runner import LoopRunner
from ralph_desk.services.container import Services
from tests.loop.conftest import StartApi, heading, run_loop, session, settings, stand_in, verb
from tests.support.fake_model_api import HttpError


def test_the_wait_doubles_up_to_the_cap_and_starts_again_after_a_good_session() -> None:
    backoff = Backoff(30.0, 100.0)
    assert [backoff.next_wait() for _ in range(4)] == [30.0, 60.0, 100.0, 100.0]
    backoff.reset()
    assert backoff.next_wait() == 30.0
    assert Backoff(30.0, 10.0).next_wait() == 30.0  # a cap below the first wait never shortens it


@pytest.mark.slow
def test_limits_in_a_row_wait_longer_each_time_and_say_when_the_loop_resumes(
    project: Services, start_api: StartApi
) -> None:
    task = project.tasks.create("core", "backend", "Busy API")
    script = [HttpError(429), HttpError(429), HttpError(429), *session(verb("done", summary="made it"))]
    start_api(**{heading(task.id): script})
    events: list[LiveEvent] = []
    loop_settings = settings(stand_in(), rate_limit_wait_s=0.25, rate_limit_max_wait_s=0.5)
    run_loop(project, loop_settings, events)
    limited = [
        event
        for event in events
        if event.kind is EventKind.LOOP_STATE and event.text == LoopState.RATE_LIMITED.value
    ]
    reasons = [str(event.data["reason"]) for event in limited]
    assert [re.sub(r"until \S+ UTC ", "", reason) for reason in reasons] == [
        "rate-limited (in 0.25 s)",
        "rate-limited (in 0.5 s)",
        "rate-limited (in 0.5 s)",
    ]
    assert all(event.data["resumes_at"] for event in limited)
    assert project.tasks.get(task.id).status is TaskStatus.DONE
    assert project.tasks.get(task.id).stuck_count == 0


@pytest.mark.slow
def test_a_reset_time_from_the_agents_stream_wins_over_the_loops_own_wait(
    project: Services, start_api: StartApi
) -> None:
    """The stand-in reports the usage limit's reset as Claude Code's rate_limit_event does (test_streams)."""
    task = project.tasks.create("core", "backend", "Out of usage")
    reset = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=2)
    start_api(**{heading(task.id): [HttpError(429, resets_at=int(reset.timestamp()))]})
    seen: list[datetime | None] = []

    async def stop_when_limited(runner: LoopRunner) -> None:
        limited = asyncio.Event()
        runner.subscribe(
            lambda event: (
                limited.set()
                if event.kind is EventKind.LOOP_STATE and event.text == LoopState.RATE_LIMITED.value
                else None
            )
        )
        await asyncio.wait_for(limited.wait(), 120)
        seen.append(runner.status.resumes_at)
        runner.stop()

    run_loop(project, settings(stand_in(), rate_limit_wait_s=1.0), runner_hook=stop_when_limited)
    assert seen == [reset]
    assert project.tasks.get(task.id).stuck_count == 0
