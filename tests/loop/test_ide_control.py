"""Loop control from an IDE client: `ralph_run` returns at once, the loop runs on, status follows it.

The loop-control tools are answered by the real `LoopController` over real MCP clients; the agents
are binary-free stand-ins run by the command template (tests/support/stand_in_agent.py follows a
script, tests/support/held_agent.py waits until it is stopped), and the real Claude Code runs on top
where it is installed.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import SocketListener
from mcp import Client, StdioServerParameters

from ralph_desk.domain.endpoints import EndpointIssuer
from ralph_desk.domain.enums import Recipe, TaskStatus
from ralph_desk.domain.session import SessionContext
from ralph_desk.loop.control import LoopController
from ralph_desk.loop.headless import run_headless
from ralph_desk.loop.lock import project_lock
from ralph_desk.loop.settings import RunOverrides, load_settings
from ralph_desk.mcp_server.embedded import EmbeddedMcp
from ralph_desk.mcp_server.server import build_server
from ralph_desk.project import ProjectPaths, init_project, update_config
from ralph_desk.services.container import Services
from tests.loop.conftest import Agent, StartApi, heading, session, use_agent, verb
from tests.support.ide import (
    HELD_AGENT,
    WAIT_S,
    CallResult,
    agent_gone,
    agent_line,
    agent_started,
    call,
    ide_client,
    use_command_agent,
)
from tests.support.stdio_wire import mcp_command

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    document: dict[str, Any] = result.structured_content
    return document


def started_issuer(services: Services, hosts: list[EmbeddedMcp]) -> Callable[[], Awaitable[EndpointIssuer]]:
    """An issuer factory starting one embedded server on first use (as `ralph-desk mcp` does)."""

    async def issuer() -> EndpointIssuer:
        if not hosts:
            host = EmbeddedMcp(services)
            await host.start()
            hosts.append(host)
        return hosts[0]

    return issuer


async def test_an_ide_client_runs_the_loop_in_the_background_and_follows_it(
    agent: Agent, project: Services, start_api: StartApi
) -> None:
    use_agent(project, agent)
    task = project.tasks.create("core", "backend", "Started from the IDE")
    start_api(
        **{
            heading(task.id): session(
                verb("learned", text="Stations use WGS84", kind="convention", scope="project"),
                verb("done", summary="ide run"),
            )
        }
    )
    hosts: list[EmbeddedMcp] = []
    controller = LoopController(project, started_issuer(project, hosts))
    server = build_server(project, SessionContext(recipe=Recipe.IDE), loop=controller)
    try:
        async with Client(server, mode="legacy") as client:
            preview = structured(await client.call_tool("ralph_run", {"dry_run": True}))
            assert preview["dryRun"] is True
            assert [t["id"] for t in preview["tasksToAttempt"]] == [task.id]
            assert project.tasks.get(task.id).status is TaskStatus.PENDING

            started = structured(await client.call_tool("ralph_run", {"max_iterations": 1}))
            assert started["status"] == "running"
            assert controller.task is not None
            await asyncio.wait_for(asyncio.shield(controller.task), 180)

            status = structured(await client.call_tool("ralph_status", {}))
            assert (status["status"], status["running"]) == ("completed", False) and "lastError" not in status
            assert status["lastRun"]["iterations"] == 1 and status["lastRun"]["allowEdits"] is False
            assert status["metrics"] == {
                "tasksCompleted": 1,
                "tasksFailed": 0,
                "tasksRemaining": 0,
                "tasksNeedingInput": 0,
            }
            assert status["qualityMetrics"]["closingVerb"] == "done"
            history = structured(await client.call_tool("ralph_history", {"limit": 10}))
            assert history["total"] == 1
            (entry,) = history["iterations"]
            assert entry["taskAttempted"] == task.id and entry["result"] == "done"
            full = structured(await client.call_tool("ralph_history", {"iteration": 1}))
            assert full["iteration"]["learnings"] == ["Stations use WGS84"]
            learnings = structured(await client.call_tool("ralph_history", {"type": "learnings"}))
            assert [item["text"] for item in learnings["learnings"]] == ["Stations use WGS84"]
            stopped = structured(await client.call_tool("ralph_stop", {}))
            assert stopped == {"success": True, "status": "not_running"}
            validated = structured(await client.call_tool("ralph_validate", {}))
            assert validated == {"success": True, "valid": True, "problems": []}
    finally:
        for host in hosts:
            await host.stop()
    assert project.tasks.get(task.id).status is TaskStatus.DONE
    (recorded,) = project.sessions.list(task_id=task.id)
    assert recorded.outcome == "done"


async def test_ralph_run_refuses_clearly_when_the_agent_is_missing(project: Services, tmp_path: Path) -> None:
    update_config(
        project.paths, agent="command", agent_command=[str(tmp_path / "no-such-agent"), "{prompt_file}"]
    )
    controller = LoopController(project, started_issuer(project, []))
    server = build_server(project, SessionContext(recipe=Recipe.IDE), loop=controller)
    async with Client(server, mode="legacy") as client:
        result = await client.call_tool("ralph_run", {})
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert '"code": "execution_failed"' in text and "no-such-agent" in text
    assert project.sessions.latest_loop_run() is None


async def test_ralph_run_refuses_at_once_while_another_process_holds_the_loop(project: Services) -> None:
    use_command_agent(project.paths, str(HELD_AGENT), "0")
    held = project_lock(project.paths.ralph)
    held.acquire()
    controller = LoopController(project, started_issuer(project, []))
    server = build_server(project, SessionContext(recipe=Recipe.IDE), loop=controller)
    try:
        async with Client(server, mode="legacy") as client:
            refused = await call(client, "ralph_run", {"max_iterations": 1})
            status = await call(client, "ralph_status", {})
    finally:
        held.release()
    assert refused["error"]["code"] == "already_running"
    assert refused["error"]["message"].startswith("a loop is already running on this project (pid ")
    details = refused["error"]["details"]
    assert details == {"tool": "ralph_run", "reason": "already_running", "logPath": details["logPath"]}
    assert Path(details["logPath"]).is_file()
    assert controller.task is None and status["status"] == "not_running"


@pytest.mark.parametrize(("setting", "stuck"), [("finish", 1), ("stop", 0)])
async def test_an_ide_gone_mid_session_lets_the_session_end_or_ends_it_as_ide_disconnect_says(
    project: Services, setting: str, stuck: int
) -> None:
    update_config(project.paths, ide_disconnect=setting)
    task = project.tasks.create("core", "backend", "Held while the IDE goes")
    hosts: list[EmbeddedMcp] = []
    controller = LoopController(project, started_issuer(project, hosts))
    try:
        async with agent_line() as (port, listener):
            use_command_agent(project.paths, str(HELD_AGENT), str(port))
            await anyio.to_thread.run_sync(controller.run, 1, False, None, False)
            async with await agent_started(listener) as agent:
                gone = asyncio.create_task(controller.client_gone())
                await asyncio.sleep(0)  # one turn of the event loop: client_gone runs up to its wait
                assert not gone.done() and controller.running()
                if setting == "stop":
                    await agent_gone(agent)  # ended by the loop, not by the test
            # finish: the held agent's line closes and it ends on its own (no closing verb: stuck once).
            await asyncio.wait_for(gone, WAIT_S)
    finally:
        for host in hosts:
            await host.stop()
    finished = project.tasks.get(task.id)
    assert (finished.status, finished.stuck_count) == (TaskStatus.PENDING, stuck)
    run = project.sessions.latest_loop_run()
    assert run is not None and run.state == "stopped" and run.ended_at is not None
    assert not controller.running()


# --- the same calls against the three servers ----------------------------------------------------

WHILE_RUNNING: list[tuple[str, dict[str, Any]]] = [
    ("ralph_status", {}),
    ("ralph_run", {"max_iterations": 1}),
    ("ralph_understand", {}),
    ("ralph_validate", {}),
    ("ralph_run", {"dry_run": True}),
    ("ralph_history", {"limit": 5}),
    ("ralph_history", {"type": "learnings"}),
    ("ralph_init", {"force": True}),
    ("ralph_stop", {}),
]
AFTER_THE_LOOP: list[tuple[str, dict[str, Any]]] = [
    ("ralph_status", {}),
    ("ralph_stop", {}),
    ("ralph_history", {"iteration": 1}),
]


def shape(value: Any) -> Any:
    """The keys and value types of a JSON document (a list by its first item)."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    return type(value).__name__


def shapes(answers: list[CallResult]) -> list[Any]:
    """The shape of each answer."""
    return [shape(answer) for answer in answers]


def held_project(root: Path, port: int) -> tuple[ProjectPaths, int]:
    """A project with one pending task whose agent waits, connected to `port`, until it is stopped."""
    paths = init_project(root, title="Held")
    services = Services.open(paths)
    try:
        services.features.create("core", "Core")
        services.disciplines.create("backend", "Backend", "server", "#336699")
        task = services.tasks.create("core", "backend", "Held until stopped")
    finally:
        services.close()
    use_command_agent(paths, str(HELD_AGENT), str(port))
    return paths, task.id


async def until_not_running(client: Client) -> None:
    """Poll ralph_status, as an IDE does, until the stopped loop has ended."""
    with anyio.fail_after(WAIT_S):
        while (await call(client, "ralph_status", {}))["running"]:
            await anyio.sleep(0.05)


async def through_ralph_desk_mcp(root: Path) -> dict[str, list[CallResult]]:
    """`ralph-desk mcp` over stdio: start the loop with ralph_run, then the common calls."""
    async with agent_line() as (port, listener):
        paths, _ = held_project(root, port)
        params = StdioServerParameters(
            command=sys.executable, args=mcp_command(paths)[1:], env=dict(os.environ)
        )
        async with Client(params, mode="legacy") as client:
            return await started_by_ralph_run(client, listener)


async def started_by_ralph_run(client: Client, listener: SocketListener) -> dict[str, list[CallResult]]:
    # Outside git a command agent is held to no edits by nothing: this run may edit.
    run = await call(client, "ralph_run", {"max_iterations": 1, "allow_edits": True})
    async with await agent_started(listener):
        during = [await call(client, tool, arguments) for tool, arguments in WHILE_RUNNING]
    await until_not_running(client)
    after = [await call(client, tool, arguments) for tool, arguments in AFTER_THE_LOOP]
    return {"run": [run], "during": during, "after": after}


async def through_the_window_server(root: Path) -> dict[str, list[CallResult]]:
    """The window's embedded server, built by the window's own composition function."""
    from ralph_desk.app import embedded_mcp

    async with agent_line() as (port, listener):
        paths, _ = held_project(root, port)
        services = Services.open(paths)
        host, _ = embedded_mcp(services)
        await host.start()
        try:
            async with ide_client(host) as client:
                return await started_by_ralph_run(client, listener)
        finally:
            await host.stop()
            services.close()


async def through_a_headless_run(root: Path) -> dict[str, list[CallResult]]:
    """`ralph-desk run`'s embedded server while its loop runs (the loop started by the run itself)."""
    async with agent_line() as (port, listener):
        paths, _ = held_project(root, port)
        services = Services.open(paths)
        hosts: list[EmbeddedMcp] = []

        def make_host(services: Services, control: LoopController) -> EmbeddedMcp:
            hosts.append(EmbeddedMcp(services, loop=control))
            return hosts[-1]

        settings = load_settings(paths, RunOverrides(max_iterations=1))
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(run_headless, services, settings, make_host, True, lambda event: None)
                async with await agent_started(listener), ide_client(hosts[0]) as client:
                    during = [await call(client, tool, arguments) for tool, arguments in WHILE_RUNNING]
        finally:
            services.close()
    return {"during": during}


# Three projects, each with a database of its own: the PostgreSQL backend gives a test one database.
@pytest.mark.sqlite_only
async def test_the_three_servers_answer_the_loop_control_tools_with_the_same_shapes(tmp_path: Path) -> None:
    by_server = {
        "ralph-desk mcp": await through_ralph_desk_mcp(tmp_path / "mcp"),
        "window": await through_the_window_server(tmp_path / "window"),
        "ralph-desk run": await through_a_headless_run(tmp_path / "run"),
    }
    mcp, window, headless = by_server.values()
    for name, answers in by_server.items():
        status, run_again, understand, valid, preview, page, learnings, init, stop = answers["during"]
        assert (status["status"], status["currentTask"], status["lastRun"]["status"]) == (
            "running",
            1,
            "running",
        )
        assert run_again["error"]["details"]["reason"] == "already_running", name
        assert understand["error"]["code"] == "already_running", name
        assert valid == {"success": True, "valid": True, "problems": []}, name
        assert preview["dryRun"] is True and init["reinitialized"] is True, name
        assert page["total"] == 1 and learnings == {
            "success": True,
            "learnings": [],
            "total": 0,
            "hasMore": False,
        }
        assert stop["status"] == "stopped", name
    assert shapes(mcp["during"]) == shapes(window["during"]) == shapes(headless["during"])

    for answers in (mcp, window):
        (run,) = answers["run"]
        assert run == {**run, "success": True, "status": "running", "iterationNumber": 0, "currentTask": 1}
        assert isinstance(run["loopId"], int)
    for answers in (mcp, window):
        status, stop, iteration = answers["after"]
        assert (status["status"], status["running"], status["lastRun"]["status"]) == (
            "stopped",
            False,
            "stopped",
        )
        assert status["metrics"] == {
            "tasksCompleted": 0,
            "tasksFailed": 0,
            "tasksRemaining": 1,
            "tasksNeedingInput": 0,
        }
        assert stop == {"success": True, "status": "not_running"}
        assert iteration["iteration"]["taskAttempted"] == 1
    assert shapes(mcp["after"]) == shapes(window["after"])
