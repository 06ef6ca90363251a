"""`get_task_checks`: a task's check evidence read by an IDE client over a real stdio process."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from ralph_desk.domain.checks import Check, CheckPurpose
from ralph_desk.project import ProjectPaths, init_project, update_config
from ralph_desk.services.container import Services
from tests.support.stdio_wire import mcp_command

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def project(tmp_path: Path) -> Iterator[ProjectPaths]:
    """Task #1 whose required check failed when run again, and task #2 never checked."""
    paths = init_project(tmp_path / "proj", title="Checked over MCP")
    failing = Check(name="tests", run=f"{sys.executable} -c \"print('1 failed'); raise SystemExit(2)\"")
    advisory = Check(name="lint", run="echo clean", required=False)
    update_config(paths, checks=[failing.model_dump(), advisory.model_dump()])
    services = Services.open(paths)
    try:
        services.features.create("core", "Core")
        services.disciplines.create("backend", "Backend", "server", "#336699")
        task = services.tasks.create("core", "backend", "Write the parser")
        services.tasks.create("core", "backend", "Document the parser")
        services.checks.run((failing, advisory), paths.root, purpose=CheckPurpose.RERUN, task_id=task.id)
    finally:
        services.close()
    yield paths


def stdio(paths: ProjectPaths) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=mcp_command(paths)[1:], env=dict(os.environ))


async def test_an_ide_client_reads_a_tasks_latest_checks_and_the_configured_ones(
    project: ProjectPaths,
) -> None:
    async with Client(stdio(project), mode="legacy") as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        checked = await client.call_tool("get_task_checks", {"task_id": 1})
        unchecked = await client.call_tool("get_task_checks", {"task_id": 2})
        unknown = await client.call_tool("get_task_checks", {"task_id": 99})

    tool = listed["get_task_checks"]
    assert tool.annotations is not None and tool.annotations.read_only_hint is True
    assert not checked.is_error and checked.structured_content is not None
    found = checked.structured_content
    assert (found["task_id"], found["verdict"]) == (1, "failed")
    assert [(c["name"], c["required"]) for c in found["configured"]] == [("tests", True), ("lint", False)]
    tests, lint = found["latest"]
    assert (tests["name"], tests["status"], tests["exit_code"], tests["purpose"]) == (
        "tests",
        "failed",
        2,
        "rerun",
    )
    assert "1 failed" in tests["tail"] and Path(tests["log_path"]).is_file()
    assert (lint["status"], lint["required"]) == ("passed", False) and lint["duration_s"] is not None
    assert unchecked.structured_content is not None
    assert (unchecked.structured_content["verdict"], unchecked.structured_content["latest"]) == (
        "not_run",
        [],
    )
    assert unknown.is_error


async def test_an_agents_task_session_does_not_get_the_read(project: ProjectPaths) -> None:
    env = {**os.environ, "RALPH_TASK_ID": "1", "RALPH_SESSION_ID": "s-1"}
    params = StdioServerParameters(command=sys.executable, args=mcp_command(project)[1:], env=env)
    async with Client(params, mode="legacy") as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert "get_task_checks" not in names
