"""Loop control from an IDE client: `ralph_run` returns at once, the loop runs on, status follows it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from ralph_desk.domain.enums import Recipe, TaskStatus
from ralph_desk.domain.session import SessionContext
from ralph_desk.loop.control import LoopController
from ralph_desk.mcp_server.embedded import EmbeddedMcp
from ralph_desk.mcp_server.server import build_server
from ralph_desk.project import update_config
from ralph_desk.services.container import Services
from tests.loop.conftest import Agent, StartApi, heading, session, use_agent, verb

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    document: dict[str, Any] = result.structured_content
    return document


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

    async def issuer() -> EmbeddedMcp:
        host = EmbeddedMcp(project)
        await host.start()
        hosts.append(host)
        return host

    controller = LoopController(project, issuer)
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
            assert status["status"] == "not_running"
            history = structured(await client.call_tool("ralph_history", {"limit": 10}))
            assert history["total"] == 1
            (entry,) = history["iterations"]
            assert entry["taskAttempted"] == task.id and entry["result"] == "done"
            learnings = structured(await client.call_tool("ralph_history", {"type": "learnings"}))
            assert [item["text"] for item in learnings["learnings"]] == ["Stations use WGS84"]
            stopped = structured(await client.call_tool("ralph_stop", {}))
            assert stopped["status"] == "not_running"
            validated = structured(await client.call_tool("ralph_validate", {}))
            assert validated["success"] is True
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
    controller = LoopController(project, lambda: None)  # type: ignore[arg-type, return-value]
    server = build_server(project, SessionContext(recipe=Recipe.IDE), loop=controller)
    async with Client(server, mode="legacy") as client:
        result = await client.call_tool("ralph_run", {})
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert '"code": "execution_failed"' in text and "no-such-agent" in text
    assert project.sessions.latest_loop_run() is None
