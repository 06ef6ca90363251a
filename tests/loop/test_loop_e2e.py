"""The loop end to end: real Claude Code CLI, embedded MCP server, scripted model API on 127.0.0.1."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ralph_desk.domain.enums import LoopState, SessionOutcome, TaskStatus, Verb
from ralph_desk.loop.model import EventKind, LiveEvent, LoopSettings
from ralph_desk.loop.runner import LoopRunner, LoopStatus
from ralph_desk.mcp_server.embedded import EmbeddedMcp
from ralph_desk.project import init_project
from ralph_desk.services.container import Services
from tests.support.fake_model_api import FakeModelApi, Hang, HttpError, Text, ToolCalls, Turn
from tests.support.npm_tools import claude_bin, missing_reason

pytestmark = [pytest.mark.slow]

LOOP_TIMEOUT_S = 240


def verb(name: str, **arguments: Any) -> tuple[str, dict[str, Any]]:
    """A scripted call of one of ralph's tools, as Claude names it."""
    return (f"mcp__ralph__{name}", arguments)


def heading(task_id: int) -> str:
    """The marker that only task `task_id`'s own prompt carries (its heading), to key its script."""
    return f"# Task #{task_id}: "


def session(*calls: tuple[str, dict[str, Any]]) -> list[Turn]:
    """One agent session: the tool calls in one turn, then a closing text turn."""
    return [ToolCalls(list(calls)), Text("Session over.")]


@pytest.fixture
def claude() -> Path:
    binary = claude_bin()
    if binary is None:
        pytest.skip(missing_reason("Claude Code"))
    return binary


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Services]:
    """A git repository with a project: feature `core`, disciplines `backend` and `docs` (no `learned`)."""
    root = tmp_path / "repo"
    root.mkdir()
    git = ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / "README.md").write_text("# repo\n")
    paths = init_project(root, title="Loop e2e")
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "start"], cwd=root, check=True)
    services = Services.open(paths)
    services.features.create("core", "Core")
    services.disciplines.create("backend", "Backend", "server", "#336699")
    services.disciplines.create("docs", "Docs", "book", "#996633", disabled_tools=["learned"])
    yield services
    services.close()


StartApi = Callable[..., FakeModelApi]


@pytest.fixture
def start_api(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[StartApi]:
    """Start the scripted model API (scripts keyed by task title) and point the agents' environment at it."""
    started: list[FakeModelApi] = []

    def start(**scripts: Sequence[Turn]) -> FakeModelApi:
        api = FakeModelApi(sessions=dict(scripts)).start()
        started.append(api)
        home = tmp_path / "home"
        home.mkdir(exist_ok=True)
        for key, value in {**api.env(), "HOME": str(home), "CLAUDE_CODE_MAX_RETRIES": "0"}.items():
            monkeypatch.setenv(key, value)
        return api

    yield start
    for api in started:
        api.stop()


def settings(claude: Path, **changes: Any) -> LoopSettings:
    base = LoopSettings(
        agent="claude", agent_bin=str(claude), max_turns=8, session_timeout_s=120, rate_limit_wait_s=0.5
    )
    return replace(base, **changes)


def run_loop(
    services: Services,
    loop_settings: LoopSettings,
    events: list[LiveEvent] | None = None,
    runner_hook: Any = None,
) -> LoopStatus:
    """Run the loop until nothing is runnable (or a limit), with the embedded MCP server."""

    async def main() -> LoopStatus:
        embedded = EmbeddedMcp(services)
        await embedded.start()
        runner = LoopRunner(services, embedded, loop_settings, exit_when_idle=True)
        if events is not None:
            runner.subscribe(events.append)
        try:
            if runner_hook is not None:
                hook = asyncio.create_task(runner_hook(runner))
            status = await asyncio.wait_for(runner.run(), LOOP_TIMEOUT_S)
            if runner_hook is not None:
                await hook
            return status
        finally:
            await embedded.stop()

    return asyncio.run(main())


def task_status(services: Services, task_id: int) -> TaskStatus:
    return services.tasks.get(task_id).status


def test_a_done_signal_completes_the_task(
    claude: Path, project: Services, start_api: StartApi, tmp_path: Path
) -> None:
    task = project.tasks.create("core", "backend", "Parse the tide table")
    start_api(**{heading(task.id): session(verb("done", summary="parser done"))})
    status = run_loop(project, settings(claude))
    assert task_status(project, task.id) is TaskStatus.DONE
    (recorded,) = project.sessions.list(task_id=task.id)
    assert recorded.closing_verb == "done" and recorded.outcome == SessionOutcome.DONE.value
    assert recorded.transcript_path is not None and Path(recorded.transcript_path).is_file()
    assert status.iteration == 1 and status.state is LoopState.COMPLETED


def test_partial_requeues_and_the_next_prompt_carries_what_remains(
    claude: Path, project: Services, start_api: StartApi, tmp_path: Path
) -> None:
    task = project.tasks.create("core", "backend", "Tide chart")
    script = [
        *session(verb("partial", summary="axes drawn", remaining="plot the water levels")),
        *session(verb("done", summary="chart complete")),
    ]
    api = start_api(**{heading(task.id): script})
    run_loop(project, settings(claude))
    assert task_status(project, task.id) is TaskStatus.DONE
    second_prompt = api.user_text(2)
    assert "plot the water levels" in second_prompt
    assert "plot the water levels" not in api.user_text(0)


def test_a_blocking_question_waits_for_the_answer_which_reaches_the_next_prompt(
    claude: Path, project: Services, start_api: StartApi, tmp_path: Path
) -> None:
    task = project.tasks.create("core", "backend", "Units of height")
    script = [
        *session(
            verb(
                "ask",
                question="Metres or feet?",
                options=["metres", "feet"],
                preferred="metres",
                blocking=True,
            ),
            verb("partial", summary="found both in the data", remaining="convert to the chosen unit"),
        ),
        *session(verb("done", summary="converted")),
    ]
    api = start_api(**{heading(task.id): script})
    first = run_loop(project, settings(claude))
    assert task_status(project, task.id) is TaskStatus.NEEDS_INPUT
    assert first.iteration == 1
    (ask,) = project.inbox.asks()
    project.inbox.answer(ask.id, "metres")
    assert task_status(project, task.id) is TaskStatus.PENDING
    run_loop(project, settings(claude))
    assert task_status(project, task.id) is TaskStatus.DONE
    assert "ANSWER to your question 'Metres or feet?': metres" in api.user_text(2)


def test_a_suggested_task_waits_as_a_draft_and_runs_once_approved(
    claude: Path, project: Services, start_api: StartApi, tmp_path: Path
) -> None:
    station_list = project.tasks.create("core", "backend", "Station list")
    scripts = {
        heading(station_list.id): session(
            verb(
                "suggest", what="Export stations as CSV", kind="new_task", why="users asked", feature="core"
            ),
            verb("done", summary="list done"),
        ),
        heading(station_list.id + 1): session(verb("done", summary="export done")),
    }
    start_api(**scripts)
    run_loop(project, settings(claude))
    (draft,) = project.tasks.list(status="draft")
    assert draft.origin.value == "agent" and draft.title.startswith("Export stations as CSV")
    project.inbox.approve(draft.id)
    run_loop(project, settings(claude))
    assert task_status(project, draft.id) is TaskStatus.DONE


def test_three_stuck_sessions_fail_the_task(
    claude: Path, project: Services, start_api: StartApi, tmp_path: Path
) -> None:
    task = project.tasks.create("core", "backend", "Impossible thing")
    script = [turn for _ in range(3) for turn in session(verb("stuck", reason="no GPU host here"))]
    start_api(**{heading(task.id): script})
    status = run_loop(project, settings(claude))
    assert task_status(project, task.id) is TaskStatus.FAILED
    assert project.tasks.get(task.id).stuck_count == 3
    assert status.iteration == 3 and status.failed == 1


def test_blocked_on_an_upstream_task_adds_the_dependency_and_resumes_after_it(
    claude: Path, project: Services, start_api: StartApi, tmp_path: Path
) -> None:
    upstream = project.tasks.create("core", "backend", "Station database", priority="low")
    blocked = project.tasks.create("core", "backend", "Station page", priority="high")
    scripts = {
        heading(blocked.id): [
            *session(
                verb("blocked", on=f"task #{upstream.id} (the station database)", kind="upstream_task"),
                verb("partial", summary="layout ready", remaining="fill with stations"),
            ),
            *session(verb("done", summary="page done")),
        ],
        heading(upstream.id): session(verb("done", summary="db done")),
    }
    start_api(**scripts)
    run_loop(project, settings(claude))
    assert upstream.id in project.tasks.get(blocked.id).depends_on
    assert task_status(project, upstream.id) is TaskStatus.DONE
    assert task_status(project, blocked.id) is TaskStatus.DONE
    outcomes = [s.outcome for s in reversed(project.sessions.list(task_id=blocked.id))]
    assert outcomes == [SessionOutcome.BLOCKED.value, SessionOutcome.DONE.value]


def test_a_rate_limit_makes_the_loop_wait_and_resume_without_counting_stuck(
    claude: Path, project: Services, start_api: StartApi, tmp_path: Path
) -> None:
    task = project.tasks.create("core", "backend", "Busy API")
    script = [HttpError(429), *session(verb("done", summary="made it"))]
    start_api(**{heading(task.id): script})
    events: list[LiveEvent] = []
    status = run_loop(project, settings(claude), events)
    assert task_status(project, task.id) is TaskStatus.DONE
    assert project.tasks.get(task.id).stuck_count == 0
    states = [e.text for e in events if e.kind is EventKind.LOOP_STATE]
    assert LoopState.RATE_LIMITED.value in states
    outcomes = [s.outcome for s in reversed(project.sessions.list(task_id=task.id))]
    assert outcomes == [SessionOutcome.RATE_LIMITED.value, SessionOutcome.DONE.value]
    assert status.iteration == 1


def test_an_agent_killed_mid_session_counts_as_stuck(
    claude: Path, project: Services, start_api: StartApi, tmp_path: Path
) -> None:
    task = project.tasks.create("core", "backend", "Long job")
    api = start_api(**{heading(task.id): [Hang()]})

    async def kill_when_waiting(runner: LoopRunner) -> None:
        await asyncio.to_thread(api.wait_turns, 1, 60, heading(task.id))
        process = runner._process
        assert process is not None
        os.killpg(process.pid, signal.SIGKILL)

    run_loop(project, settings(claude, max_iterations=1), runner_hook=kill_when_waiting)
    reloaded = project.tasks.get(task.id)
    assert reloaded.status is TaskStatus.PENDING and reloaded.stuck_count == 1
    (recorded,) = project.sessions.list(task_id=task.id)
    assert recorded.closing_verb is None and recorded.outcome == SessionOutcome.STUCK.value
    assert recorded.exit_code == -signal.SIGKILL


def test_a_tool_the_discipline_disables_is_never_offered_to_the_agent(
    claude: Path, project: Services, start_api: StartApi, tmp_path: Path
) -> None:
    task = project.tasks.create("core", "docs", "Write the guide")
    api = start_api(**{heading(task.id): session(verb("done", summary="guide"))})
    run_loop(project, settings(claude))
    offered = set(api.offered_tools(0))
    assert "mcp__ralph__done" in offered and "mcp__ralph__flag" in offered
    assert "mcp__ralph__learned" not in offered
    assert "learned" not in api.user_text(0)
    assert task_status(project, task.id) is TaskStatus.DONE


def test_max_iterations_and_the_cost_budget_stop_the_loop(
    claude: Path, project: Services, start_api: StartApi, tmp_path: Path
) -> None:
    titles = ["First job", "Second job", "Third job"]
    tasks = [project.tasks.create("core", "backend", title) for title in titles]
    start_api(**{heading(t.id): session(verb("done", summary=t.title)) for t in tasks})
    by_iterations = run_loop(project, settings(claude, max_iterations=2))
    assert by_iterations.iteration == 2
    assert by_iterations.stop_reason is not None and "2 iterations" in by_iterations.stop_reason
    assert by_iterations.cost_usd > 0
    by_budget = run_loop(project, settings(claude, max_cost_usd=0.0))
    assert by_budget.iteration == 0 and "budget" in (by_budget.stop_reason or "")
    assert [t.status for t in project.tasks.list(search="job")].count(TaskStatus.DONE) == 2


def test_edits_found_when_edits_are_not_allowed_are_stashed_and_the_session_rejected(
    claude: Path, project: Services, start_api: StartApi, tmp_path: Path
) -> None:
    root = project.paths.root
    writer = tmp_path / "writer_server.py"
    writer.write_text(
        "from pathlib import Path\n"
        "from mcp.server.mcpserver import MCPServer\n"
        "server = MCPServer('files')\n"
        "@server.tool()\n"
        "def write_note(text: str) -> str:\n"
        "    '''Write NOTES.md in the working directory.'''\n"
        "    Path('NOTES.md').write_text(text)\n"
        "    return 'written'\n"
        "server.run()\n"
    )
    project.disciplines.update(
        "backend", mcp_servers={"files": {"command": str(Path(sys.executable)), "args": [str(writer)]}}
    )
    task = project.tasks.create("core", "backend", "Review only")
    script = session(("mcp__files__write_note", {"text": "sneaky edit"}), verb("done", summary="reviewed"))
    start_api(**{heading(task.id): script})
    run_loop(project, settings(claude, allow_edits=False, max_iterations=1))
    (recorded,) = project.sessions.list(task_id=task.id)
    assert recorded.outcome == SessionOutcome.REJECTED.value
    assert recorded.changed_files == ("NOTES.md",)
    assert not (root / "NOTES.md").exists()
    stashes = subprocess.run(["git", "stash", "list"], cwd=root, capture_output=True, text=True).stdout
    assert "edits were not allowed" in stashes
    subprocess.run(["git", "stash", "pop", "-q"], cwd=root, check=True)
    assert (root / "NOTES.md").read_text() == "sneaky edit"
    assert task_status(project, task.id) is TaskStatus.PENDING
    assert [s.verb for s in project.signals.for_task(task.id)] == [Verb.DONE]
