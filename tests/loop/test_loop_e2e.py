"""The loop end to end: real Claude Code CLI, embedded MCP server, scripted model API on 127.0.0.1."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ralph_desk.domain.enums import LoopState, SessionOutcome, TaskStatus, Verb
from ralph_desk.loop.model import EventKind, LiveEvent
from ralph_desk.loop.runner import LoopRunner
from ralph_desk.services.container import Services
from tests.loop.conftest import Agent, StartApi, heading, run_loop, session, settings, verb
from tests.support.fake_model_api import Hang, HttpError

pytestmark = [pytest.mark.slow]


def task_status(services: Services, task_id: int) -> TaskStatus:
    return services.tasks.get(task_id).status


def test_a_done_signal_completes_the_task(
    agent: Agent, project: Services, start_api: StartApi, tmp_path: Path
) -> None:
    task = project.tasks.create("core", "backend", "Parse the tide table")
    start_api(**{heading(task.id): session(verb("done", summary="parser done"))})
    status = run_loop(project, settings(agent))
    assert task_status(project, task.id) is TaskStatus.DONE
    (recorded,) = project.sessions.list(task_id=task.id)
    assert recorded.closing_verb == "done" and recorded.outcome == SessionOutcome.DONE.value
    assert recorded.transcript_path is not None and Path(recorded.transcript_path).is_file()
    assert status.iteration == 1 and status.state is LoopState.COMPLETED


def test_partial_requeues_and_the_next_prompt_carries_what_remains(
    agent: Agent, project: Services, start_api: StartApi, tmp_path: Path
) -> None:
    task = project.tasks.create("core", "backend", "Tide chart")
    script = [
        *session(verb("partial", summary="axes drawn", remaining="plot the water levels")),
        *session(verb("done", summary="chart complete")),
    ]
    api = start_api(**{heading(task.id): script})
    run_loop(project, settings(agent))
    assert task_status(project, task.id) is TaskStatus.DONE
    second_prompt = api.user_text(2)
    assert "plot the water levels" in second_prompt
    assert "plot the water levels" not in api.user_text(0)


def test_a_blocking_question_waits_for_the_answer_which_reaches_the_next_prompt(
    agent: Agent, project: Services, start_api: StartApi, tmp_path: Path
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
    first = run_loop(project, settings(agent))
    assert task_status(project, task.id) is TaskStatus.NEEDS_INPUT
    assert first.iteration == 1
    (ask,) = project.inbox.asks()
    project.inbox.answer(ask.id, "metres")
    assert task_status(project, task.id) is TaskStatus.PENDING
    run_loop(project, settings(agent))
    assert task_status(project, task.id) is TaskStatus.DONE
    assert "ANSWER to your question 'Metres or feet?': metres" in api.user_text(2)


def test_a_suggested_task_waits_as_a_draft_and_runs_once_approved(
    agent: Agent, project: Services, start_api: StartApi, tmp_path: Path
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
    run_loop(project, settings(agent))
    (draft,) = project.tasks.list(status="draft")
    assert draft.origin.value == "agent" and draft.title.startswith("Export stations as CSV")
    project.inbox.approve(draft.id)
    run_loop(project, settings(agent))
    assert task_status(project, draft.id) is TaskStatus.DONE


def test_three_stuck_sessions_fail_the_task(
    agent: Agent, project: Services, start_api: StartApi, tmp_path: Path
) -> None:
    task = project.tasks.create("core", "backend", "Impossible thing")
    script = [turn for _ in range(3) for turn in session(verb("stuck", reason="no GPU host here"))]
    start_api(**{heading(task.id): script})
    status = run_loop(project, settings(agent))
    assert task_status(project, task.id) is TaskStatus.FAILED
    assert project.tasks.get(task.id).stuck_count == 3
    assert status.iteration == 3 and status.failed == 1


def test_blocked_on_an_upstream_task_adds_the_dependency_and_resumes_after_it(
    agent: Agent, project: Services, start_api: StartApi, tmp_path: Path
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
    run_loop(project, settings(agent))
    assert upstream.id in project.tasks.get(blocked.id).depends_on
    assert task_status(project, upstream.id) is TaskStatus.DONE
    assert task_status(project, blocked.id) is TaskStatus.DONE
    outcomes = [s.outcome for s in reversed(project.sessions.list(task_id=blocked.id))]
    assert outcomes == [SessionOutcome.BLOCKED.value, SessionOutcome.DONE.value]


def test_a_rate_limit_makes_the_loop_wait_and_resume_without_counting_stuck(
    agent: Agent, project: Services, start_api: StartApi, tmp_path: Path
) -> None:
    task = project.tasks.create("core", "backend", "Busy API")
    script = [HttpError(429), *session(verb("done", summary="made it"))]
    start_api(**{heading(task.id): script})
    events: list[LiveEvent] = []
    status = run_loop(project, settings(agent), events)
    assert task_status(project, task.id) is TaskStatus.DONE
    assert project.tasks.get(task.id).stuck_count == 0
    states = [e.text for e in events if e.kind is EventKind.LOOP_STATE]
    assert LoopState.RATE_LIMITED.value in states
    outcomes = [s.outcome for s in reversed(project.sessions.list(task_id=task.id))]
    assert outcomes == [SessionOutcome.RATE_LIMITED.value, SessionOutcome.DONE.value]
    assert status.iteration == 1


def test_an_agent_killed_mid_session_counts_as_stuck(
    agent: Agent, project: Services, start_api: StartApi, tmp_path: Path
) -> None:
    task = project.tasks.create("core", "backend", "Long job")
    api = start_api(**{heading(task.id): [Hang()]})

    async def kill_when_waiting(runner: LoopRunner) -> None:
        await asyncio.to_thread(api.wait_turns, 1, 60, heading(task.id))
        (process,) = runner.processes.running.values()
        os.killpg(process.pid, signal.SIGKILL)

    run_loop(project, settings(agent, max_iterations=1), runner_hook=kill_when_waiting)
    reloaded = project.tasks.get(task.id)
    assert reloaded.status is TaskStatus.PENDING and reloaded.stuck_count == 1
    (recorded,) = project.sessions.list(task_id=task.id)
    assert recorded.closing_verb is None and recorded.outcome == SessionOutcome.STUCK.value
    assert recorded.exit_code == -signal.SIGKILL


def test_a_tool_the_discipline_disables_is_never_offered_to_the_agent(
    agent: Agent, project: Services, start_api: StartApi, tmp_path: Path
) -> None:
    task = project.tasks.create("core", "docs", "Write the guide")
    api = start_api(**{heading(task.id): session(verb("done", summary="guide"))})
    run_loop(project, settings(agent))
    offered = set(api.offered_tools(0))
    assert "mcp__ralph__done" in offered and "mcp__ralph__flag" in offered
    assert "mcp__ralph__learned" not in offered
    assert "learned" not in api.user_text(0)
    assert task_status(project, task.id) is TaskStatus.DONE


def test_max_iterations_and_the_cost_budget_stop_the_loop(
    agent: Agent, project: Services, start_api: StartApi, tmp_path: Path
) -> None:
    titles = ["First job", "Second job", "Third job"]
    tasks = [project.tasks.create("core", "backend", title) for title in titles]
    start_api(**{heading(t.id): session(verb("done", summary=t.title)) for t in tasks})
    by_iterations = run_loop(project, settings(agent, max_iterations=2))
    assert by_iterations.iteration == 2
    assert by_iterations.stop_reason is not None and "2 iterations" in by_iterations.stop_reason
    assert by_iterations.cost_usd > 0
    by_budget = run_loop(project, settings(agent, max_cost_usd=0.0))
    assert by_budget.iteration == 0 and "budget" in (by_budget.stop_reason or "")
    assert [t.status for t in project.tasks.list(search="job")].count(TaskStatus.DONE) == 2


def test_edits_found_when_edits_are_not_allowed_are_stashed_and_the_session_rejected(
    agent: Agent, project: Services, start_api: StartApi, tmp_path: Path
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
    # Unconfined, the edit happens and is stashed; a sandbox makes the folder read-only (tests/sandbox).
    run_loop(project, settings(agent, allow_edits=False, max_iterations=1, sandbox=False))
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
