"""An agent that crashes says so: its exit code and last standard error lines, wherever its session shows."""

from __future__ import annotations

import shlex
import sys
from dataclasses import replace

import pytest

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.loop.model import EventKind, LiveEvent, LoopSettings
from ralph_desk.loop.replay import replay
from ralph_desk.services.container import Services
from tests.loop.conftest import run_loop

pytestmark = pytest.mark.slow

CRASHING = shlex.join(
    [
        sys.executable,
        "-c",
        "import sys\n"
        "for n in range(40): print('loading plugin', n, file=sys.stderr)\n"
        "print('Error: invalid API key (check ANTHROPIC_API_KEY)', file=sys.stderr)\n"
        "sys.exit(3)",
    ]
)


def crash_settings() -> LoopSettings:
    """A command agent that writes 41 lines on its standard error and exits with 3; one stuck fails a task."""
    return replace(
        LoopSettings(agent="command", agent_command=CRASHING), stuck_threshold=1, session_timeout_s=60
    )


def test_a_crashing_agents_exit_code_and_last_stderr_lines_reach_the_stream_the_session_and_the_failed_reason(
    project: Services,
) -> None:
    task = project.tasks.create("core", "backend", "Crashes")
    events: list[LiveEvent] = []

    run_loop(project, crash_settings(), events)

    assert project.tasks.get(task.id).status is TaskStatus.FAILED
    (session,) = project.sessions.list(task_id=task.id)
    assert session.exit_code == 3
    error = session.error or ""
    assert "the agent exited with code 3" in error and "invalid API key" in error
    assert "loading plugin 39" in error and "loading plugin 0\n" not in error  # the last lines only
    assert len(error) < 5000
    (failed,) = project.inbox.failed()
    assert "exited with code 3" in failed.reason and "invalid API key" in failed.reason
    assert "no closing verb" not in failed.reason
    shown = [event.text for event in events if event.kind is EventKind.ERROR]
    assert any("exited with code 3" in text and "invalid API key" in text for text in shown)
    (ended,) = [event for event in events if event.kind is EventKind.SESSION_ENDED]
    assert ended.data["crashed"] is True and ended.data["exit_code"] == 3
    replayed = replay(project.paths.root, project.paths.root / (session.transcript_path or ""), "command")
    assert any(e.kind is EventKind.ERROR and "invalid API key" in e.text for e in replayed)
    assert any(e.kind is EventKind.STDERR and "invalid API key" in e.text for e in replayed)


def test_an_agent_that_exits_cleanly_without_a_verb_is_no_crash(project: Services) -> None:
    task = project.tasks.create("core", "backend", "Says nothing")
    clean = replace(crash_settings(), agent_command=shlex.join([sys.executable, "-c", "print('hello')"]))
    events: list[LiveEvent] = []

    run_loop(project, clean, events)

    (session,) = project.sessions.list(task_id=task.id)
    assert session.exit_code == 0 and not session.error
    (failed,) = project.inbox.failed()
    assert "no closing verb" in failed.reason
    assert not [event for event in events if event.kind is EventKind.ERROR]
