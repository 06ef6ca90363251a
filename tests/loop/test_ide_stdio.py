"""`ralph-desk mcp` over stdio, driven by the SDK's `Client` as an IDE drives it (issue 13, seeds 003/004).

One server process per client, started on a folder that is no project yet: init, validate, a loop of
binary-free command agents (tests/support/held_agent.py waits until stopped, tests/support/stand_in_agent.py
calls verbs), status while it runs and after, history in its three forms, stop, refusals with their codes,
and a client that goes away mid-session.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.project import ProjectPaths, update_config
from ralph_desk.services.container import Services
from tests.support import stand_in_agent
from tests.support.ide import (
    HELD_AGENT,
    WAIT_S,
    CallResult,
    agent_gone,
    agent_line,
    agent_pid,
    agent_started,
    call,
    use_command_agent,
)
from tests.support.stdio_wire import mcp_command

# The project's database is the SQLite file ralph_init makes in the fresh folder.
pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.sqlite_only]

BEFORE_INIT = {"ralph_init", "ralph_validate"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def ide(paths: ProjectPaths, notices: list[Any] | None = None) -> AsyncIterator[Client]:
    """An IDE's client of `ralph-desk mcp --root ROOT`, its server a process of its own."""

    async def seen(message: Any) -> None:
        if notices is not None:
            notices.append(message)

    env = {key: value for key, value in os.environ.items() if key != "ANTHROPIC_BASE_URL"}
    params = StdioServerParameters(command=sys.executable, args=mcp_command(paths)[1:], env=env)
    async with Client(params, mode="legacy", message_handler=seen) as client:
        yield client


async def tool_names(client: Client) -> set[str]:
    return {tool.name for tool in (await client.list_tools()).tools}


def gone(port: int) -> bool:
    """Whether no process runs the held agent of `port`, or its sandbox: an agent confined in a process
    namespace of its own reports an id only that namespace knows, so the command lines are read."""
    wanted = (str(HELD_AGENT).encode(), str(port).encode())
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue  # ended meanwhile
        if all(word in words for word in wanted):
            return False
    return True


async def until_ended(client: Client) -> CallResult:
    """Poll ralph_status, as an IDE does, until no loop runs; the last answer."""
    with anyio.fail_after(WAIT_S):
        while (status := await call(client, "ralph_status", {}))["running"]:
            await anyio.sleep(0.05)
    return status


def add_tasks(paths: ProjectPaths, *titles: str) -> list[int]:
    """Tasks a person adds in the window (the `ide` recipe reads tasks, it does not write them)."""
    services = Services.open(paths)
    try:
        if not services.features.list():
            services.features.create("core", "Core")
            services.disciplines.create("backend", "Backend", "server", "#336699")
        return [services.tasks.create("core", "backend", title).id for title in titles]
    finally:
        services.close()


def task_status(paths: ProjectPaths, task_id: int) -> TaskStatus:
    services = Services.open(paths)
    try:
        return services.tasks.get(task_id).status
    finally:
        services.close()


def use_verbs_agent(paths: ProjectPaths) -> None:
    """The stand-in agent, calling `learned` twice and `done` in every session."""
    calls = [
        'learned={"text": "Tide tables are in UTC", "kind": "convention", "scope": "project"}',
        'learned={"text": "Stations are keyed by id", "kind": "convention", "scope": "project"}',
        'done={"summary": "did the task"}',
    ]
    words = ["-I", stand_in_agent.__file__, "{prompt_file}", "{mcp_config}"]
    use_command_agent(paths, *words, *(word for item in calls for word in ("--call", item)))


async def test_an_ide_initialises_a_folder_then_runs_follows_and_stops_the_loop(tmp_path: Path) -> None:
    root = tmp_path / "harbour"
    root.mkdir()
    paths = ProjectPaths.at(root)
    notices: list[Any] = []
    async with ide(paths, notices) as client:
        # A folder that is no project yet: init and validate only; every other tool says so.
        assert await tool_names(client) == BEFORE_INIT
        assert client.server_capabilities.tools is not None and client.server_capabilities.tools.list_changed
        refused = await call(client, "ralph_status", {})
        assert refused["error"]["code"] == "not_initialised"
        assert refused["error"]["message"] == "not a ralph-desk project yet: call ralph_init"
        assert (await call(client, "list_tasks", {}))["error"]["code"] == "not_initialised"
        invalid = await call(client, "ralph_validate", {})
        assert invalid["valid"] is False and invalid["problems"][0]["path"] == ".ralph"
        assert not paths.ralph.exists(), "validating must not make the folder a project"

        made = await call(client, "ralph_init", {})
        assert made == {
            "success": True,
            "taskCount": 0,
            "prdPath": str(paths.prd_file),
            "ralphDir": str(paths.ralph),
            "initialized": True,
        }
        assert json.loads(paths.prd_file.read_text(encoding="utf-8"))["userStories"] == []
        assert {"ralph_run", "ralph_status", "ralph_history", "list_tasks"} <= await tool_names(client)
        assert any("tools/list_changed" in repr(notice) for notice in notices), notices
        assert (await call(client, "ralph_validate", {}))["valid"] is True
        again = await call(client, "ralph_init", {})
        assert again["error"]["code"] == "invalid_argument" and "force=true" in again["error"]["message"]
        assert list(paths.logs_dir.glob("*_mcp.log")), "once a project, the server logs into it"

        # A broken project: the problems come back as data, and ralph_init(force) mends them.
        paths.config_file.write_text('{"agent": "nobody", "max_turns": 0}', encoding="utf-8")
        broken = await call(client, "ralph_validate", {})
        assert broken["valid"] is False
        assert {problem["path"] for problem in broken["problems"]} == {".ralph/config.json"}
        assert any("agent" in problem["message"] for problem in broken["problems"])
        assert (await call(client, "ralph_init", {"force": True}))["reinitialized"] is True
        assert (await call(client, "ralph_validate", {}))["valid"] is True

        # Argument errors keep their code.
        bad_limit = await call(client, "ralph_history", {"limit": 0})
        assert bad_limit["error"]["code"] == "invalid_argument" and "limit" in bad_limit["error"]["message"]
        bad_run = await call(client, "ralph_run", {"max_iterations": -1})
        assert bad_run["error"]["code"] == "invalid_argument"
        # An execution error names the server's log file.
        update_config(
            paths, agent="command", agent_command=[str(tmp_path / "no-such-agent"), "{prompt_file}"]
        )
        failed = (await call(client, "ralph_run", {}))["error"]
        assert failed["code"] == "execution_failed" and "no-such-agent" in failed["message"]
        log_file = Path(failed["details"]["logFile"])
        assert log_file.parent == paths.logs_dir and log_file.name.endswith("_mcp.log") and log_file.is_file()

        first, second, third = add_tasks(paths, "Parse tide tables", "Draw the chart", "Print the table")
        async with agent_line() as (port, listener):
            use_command_agent(paths, str(HELD_AGENT), str(port))
            preview = await call(client, "ralph_run", {"dry_run": True})
            assert [task["id"] for task in preview["tasksToAttempt"]] == [first, second, third]
            read = await client.read_resource("ralph://prompt")
            assert read.contents[0].text == preview["preview"]  # type: ignore[union-attr]
            assert f"# Task #{first}: " in preview["preview"]

            # A loop whose agent waits: follow it, refuse what cannot run beside it, stop it. (Outside
            # git nothing holds a command agent to no edits: these runs may edit.)
            started = await call(client, "ralph_run", {"max_iterations": 3, "allow_edits": True})
            assert (started["status"], started["currentTask"]) == ("running", first)
            async with await agent_started(listener) as agent:
                await agent_pid(agent)  # its first line; the id is its namespace's own when confined
                during = await call(client, "ralph_status", {})
                assert during["running"] is True and during["status"] == "running"
                assert (during["loopId"], during["currentTask"]) == (started["loopId"], first)
                assert during["metrics"]["tasksRemaining"] == 3 and "lastActivity" in during
                assert task_status(paths, first) is TaskStatus.IN_PROGRESS
                understand = await call(client, "ralph_understand", {})
                assert understand["error"]["code"] == "already_running"
                assert "ralph_stop" in understand["error"]["message"]
                twice = await call(client, "ralph_run", {})
                assert twice["error"]["code"] == "already_running"

                stopped = await call(client, "ralph_stop", {})
                assert stopped == {
                    "success": True,
                    "status": "stopped",
                    "loopId": started["loopId"],
                    "returnedTask": first,
                }
                await agent_gone(agent)
            assert gone(port)
            assert task_status(paths, first) is TaskStatus.PENDING
            assert (await call(client, "ralph_stop", {})) == {"success": True, "status": "not_running"}
            after_stop = await until_ended(client)
            assert (after_stop["status"], after_stop["lastRun"]["status"]) == ("stopped", "stopped")

        # A loop whose agent calls verbs: it ends by itself; status and history tell how it went.
        use_verbs_agent(paths)
        run = await call(client, "ralph_run", {"max_iterations": 2, "allow_edits": True})
        assert run["currentTask"] == first
        ended = await until_ended(client)
        assert (ended["status"], ended["iterationNumber"]) == ("completed", 2)
        assert ended["metrics"] == {
            "tasksCompleted": 2,
            "tasksFailed": 0,
            "tasksRemaining": 1,
            "tasksNeedingInput": 0,
        }
        quality = ended["qualityMetrics"]
        assert quality["closingVerb"] == "done" and quality["turns"] >= 1 and quality["duration"] >= 0
        assert "costUsd" in quality and "changedFiles" in quality

        page = await call(client, "ralph_history", {"limit": 1})
        assert (len(page["iterations"]), page["total"], page["hasMore"]) == (1, 3, True)
        assert page["iterations"][0]["taskAttempted"] == second
        assert page["iterations"][0]["qualityMetrics"]["closingVerb"] == "done"
        rest = await call(client, "ralph_history", {"limit": 5, "offset": 1})
        assert [entry["result"] for entry in rest["iterations"]] == ["done", "stopped"]
        assert rest["hasMore"] is False

        detail = (await call(client, "ralph_history", {"iteration": 1, "limit": 2}))["iteration"]
        assert (detail["taskAttempted"], detail["summary"]) == (first, "did the task")
        assert [signal["verb"] for signal in detail["signals"]] == ["learned", "learned"]
        assert detail["signalsTotal"] == 3 and len(detail["learnings"]) == 2
        assert detail["qualityMetrics"]["closingVerb"] == "done"
        one = (await call(client, "ralph_history", {"iteration": 2, "limit": 1}))["iteration"]
        assert len(one["signals"]) == 1 and len(one["learnings"]) == 1

        learnings = await call(client, "ralph_history", {"type": "learnings", "limit": 3})
        assert (len(learnings["learnings"]), learnings["total"], learnings["hasMore"]) == (3, 4, True)
        assert {item["iterationNumber"] for item in learnings["learnings"]} <= {1, 2}
        missing = await call(client, "ralph_history", {"iteration": 9})
        assert missing["error"]["code"] == "invalid_argument"
    assert task_status(paths, third) is TaskStatus.PENDING


@pytest.mark.parametrize("setting", ["finish", "stop"])
async def test_a_client_that_goes_away_mid_session_leaves_no_agent_task_or_running_loop(
    tmp_path: Path, setting: str
) -> None:
    paths = ProjectPaths.at(tmp_path)
    async with ide(paths) as client:
        assert (await call(client, "ralph_init", {}))["initialized"] is True
    (task,) = add_tasks(paths, "Held while the IDE goes")
    update_config(paths, ide_disconnect=setting)
    async with agent_line() as (port, listener):
        use_command_agent(paths, str(HELD_AGENT), str(port))
        async with ide(paths) as client:
            started = await call(client, "ralph_run", {"max_iterations": 1, "allow_edits": True})
            agent = await agent_started(listener)
            await agent_pid(agent)  # its first line; the id is its namespace's own when confined
        # The client has gone (stdin closed; the SDK then signals the server): the agent is ended.
        async with agent:
            await agent_gone(agent)
    assert gone(port)
    services = Services.open(paths)
    try:
        assert services.tasks.get(task).status is TaskStatus.PENDING
        run = services.sessions.latest_loop_run()
        assert run is not None and run.id == started["loopId"]
        assert run.state == "stopped" and run.ended_at is not None
        (session,) = services.sessions.list(task_id=task)
        assert session.ended_at is not None and session.outcome == "stopped"
    finally:
        services.close()
