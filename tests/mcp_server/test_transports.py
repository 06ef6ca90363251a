"""`ralph-desk mcp` as real processes over stdio and HTTP, and the embedded host's per-session credentials."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from ralph_desk.domain.enums import Recipe
from ralph_desk.domain.session import SessionContext
from ralph_desk.mcp_server.embedded import EmbeddedMcp
from ralph_desk.project import ProjectPaths, init_project
from ralph_desk.services.container import Services
from tests.support.http_process import serving
from tests.support.jsonrpc import INITIALIZE
from tests.support.stdio_wire import mcp_command

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def project(tmp_path: Path) -> Iterator[ProjectPaths]:
    """A project with one feature, two disciplines (docs disables `learned`) and two tasks."""
    paths = init_project(tmp_path / "proj", title="Transport test")
    services = Services.open(paths)
    services.features.create("core", "Core")
    services.disciplines.create("backend", "Backend", "server", "#336699")
    services.disciplines.create("docs", "Docs", "book", "#996633", disabled_tools=["learned"])
    services.tasks.create("core", "backend", "Write the parser")
    services.tasks.create("core", "docs", "Document the parser")
    services.close()
    yield paths


def signal_rows(paths: ProjectPaths) -> list[tuple[str, int, str | None]]:
    services = Services.open(paths)
    try:
        return [(s.verb.value, s.task_id, s.session_id) for s in services.signals.for_task(1)]
    finally:
        services.close()


async def test_stdio_process_serves_the_ide_recipe_when_given_nothing(project: ProjectPaths) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=mcp_command(project)[1:], env=dict(os.environ)
    )
    async with Client(params, mode="legacy") as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert "ralph_status" in names and "get_task" in names
        assert "done" not in names and "create_task" not in names
        result = await client.call_tool("get_task", {"id": 1})
        assert not result.is_error
        assert result.structured_content is not None
        assert result.structured_content["title"] == "Write the parser"


async def test_stdio_process_records_verbs_for_the_task_from_the_environment(project: ProjectPaths) -> None:
    env = {**os.environ, "RALPH_TASK_ID": "1", "RALPH_SESSION_ID": "sess-env"}
    params = StdioServerParameters(command=sys.executable, args=mcp_command(project)[1:], env=env)
    async with Client(params, mode="legacy") as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert names == {"done", "partial", "stuck", "ask", "flag", "learned", "suggest", "blocked"}
        result = await client.call_tool("done", {"summary": "parser written"})
        assert not result.is_error, result.content
    assert signal_rows(project) == [("done", 1, "sess-env")]


async def test_flags_beat_the_environment(project: ProjectPaths) -> None:
    env = {**os.environ, "RALPH_TASK_ID": "2", "RALPH_SESSION_ID": "from-env"}
    args = mcp_command(project, "--task-id", "1", "--session-id", "from-flag")[1:]
    async with Client(
        StdioServerParameters(command=sys.executable, args=args, env=env), mode="legacy"
    ) as client:
        assert not (await client.call_tool("stuck", {"reason": "no input data"})).is_error
    assert signal_rows(project) == [("stuck", 1, "from-flag")]


def test_a_corrupt_context_file_stops_the_server_before_it_serves(
    project: ProjectPaths, tmp_path: Path
) -> None:
    broken = tmp_path / "context.json"
    broken.write_text('{"recipe": "task_execution", "task_id": ', encoding="utf-8")
    run = subprocess.run(
        mcp_command(project, "--context", str(broken)), input="", capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 2
    assert "refusing to start" in run.stderr and "not valid JSON" in run.stderr
    assert run.stdout == ""


def test_an_unreadable_context_file_stops_the_server(project: ProjectPaths, tmp_path: Path) -> None:
    run = subprocess.run(
        mcp_command(project, "--context", str(tmp_path / "missing.json")),
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert "cannot be read" in run.stderr


@pytest.fixture
def http_server(project: ProjectPaths) -> Iterator[tuple[str, str]]:
    """`ralph-desk mcp --transport http` as a process serving task 2 (docs) with a known token."""
    token = "test-token-123"
    command = mcp_command(
        project, "--transport", "http", "--token", token, "--task-id", "2", "--session-id", "s-http"
    )
    with serving(command) as url:
        yield url, token


def authorised(token: str, **headers: str) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}", **headers}, timeout=30)


async def test_http_process_refuses_requests_without_a_token(http_server: tuple[str, str]) -> None:
    url, _ = http_server
    async with httpx2.AsyncClient(timeout=30) as http:
        response = await http.post(
            url, json=INITIALIZE, headers={"Accept": "application/json, text/event-stream"}
        )
    assert response.status_code == 401


async def test_http_process_refuses_a_wrong_token(http_server: tuple[str, str]) -> None:
    url, _ = http_server
    async with authorised("not-the-token") as http:
        response = await http.post(
            url, json=INITIALIZE, headers={"Accept": "application/json, text/event-stream"}
        )
    assert response.status_code == 401


async def test_http_process_refuses_a_foreign_host_header(http_server: tuple[str, str]) -> None:
    url, token = http_server
    async with authorised(token) as http:
        response = await http.post(
            url,
            json=INITIALIZE,
            headers={"Accept": "application/json, text/event-stream", "Host": "evil.example:80"},
        )
    assert response.status_code == 421


async def test_http_process_refuses_a_foreign_origin(http_server: tuple[str, str]) -> None:
    url, token = http_server
    async with authorised(token) as http:
        response = await http.post(
            url,
            json=INITIALIZE,
            headers={"Accept": "application/json, text/event-stream", "Origin": "http://evil.example"},
        )
    assert response.status_code == 403


@pytest.mark.sqlite_only  # the project's database is the SQLite file ralph_init makes
async def test_http_process_on_a_folder_with_no_project_serves_init_then_the_ide_tools(
    tmp_path: Path,
) -> None:
    fresh = ProjectPaths.at(tmp_path)
    token = "fresh-token"
    command = mcp_command(fresh, "--transport", "http", "--token", token)
    with serving(command) as url:
        async with Client(
            streamable_http_client(url, http_client=authorised(token)), mode="legacy"
        ) as client:
            before = {tool.name for tool in (await client.list_tools()).tools}
            refused = await client.call_tool("ralph_status", {})
            made = await client.call_tool("ralph_init", {})
            after = {tool.name for tool in (await client.list_tools()).tools}
            status = await client.call_tool("ralph_status", {})
    assert before == {"ralph_init", "ralph_validate"}
    assert json.loads(refused.content[0].text)["code"] == "not_initialised"  # type: ignore[union-attr]
    assert made.structured_content is not None and made.structured_content["initialized"] is True
    assert {"ralph_run", "ralph_status", "list_tasks"} <= after
    assert status.structured_content is not None and status.structured_content["status"] == "not_running"
    assert fresh.prd_file.is_file()


async def test_http_session_sees_its_discipline_override_and_cannot_call_the_hidden_tool(
    http_server: tuple[str, str], project: ProjectPaths
) -> None:
    url, token = http_server
    transport = streamable_http_client(url, http_client=authorised(token))
    async with Client(transport, mode="legacy") as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert "learned" not in names and "done" in names
        refused = await client.call_tool("learned", {"text": "x", "kind": "discovery"})
        assert refused.is_error
        assert "discipline 'docs'" in refused.content[0].text  # type: ignore[union-attr]
        assert not (await client.call_tool("partial", {"summary": "a", "remaining": "b"})).is_error


async def test_embedded_host_gives_each_session_only_its_tools_and_revokes_them(
    project: ProjectPaths,
) -> None:
    services = Services.open(project)
    embedded = EmbeddedMcp(services)
    await embedded.start()
    try:
        task_session = embedded.open_session(
            SessionContext(recipe=Recipe.TASK_EXECUTION, task_id=1, session_id="s-1", discipline="backend")
        )
        ide_session = embedded.open_session(SessionContext(recipe=Recipe.IDE, session_id="s-ide"))
        async with Client(
            streamable_http_client(embedded.url, http_client=authorised(task_session.token)), mode="legacy"
        ) as client:
            assert "get_task" not in {t.name for t in (await client.list_tools()).tools}
            assert (await client.call_tool("get_task", {"id": 1})).is_error
            assert not (await client.call_tool("done", {"summary": "ok"})).is_error
        async with Client(
            streamable_http_client(embedded.url, http_client=authorised(ide_session.token)), mode="legacy"
        ) as client:
            assert "get_task" in {t.name for t in (await client.list_tools()).tools}
            assert (await client.call_tool("done", {"summary": "not mine"})).is_error
        session_file = project.sessions_dir / "s-1.json"
        assert stat.S_IMODE(session_file.stat().st_mode) == 0o600
        assert json.loads(project.context_file.read_text())["recipe"] == "ide"
        embedded.close_session(task_session)
        async with authorised(task_session.token) as http:
            response = await http.post(
                embedded.url, json=INITIALIZE, headers={"Accept": "application/json, text/event-stream"}
            )
        assert response.status_code == 401
        assert "token" not in json.loads(session_file.read_text())
    finally:
        await embedded.stop()
        services.close()
    assert signal_rows(project) == [("done", 1, "s-1")]


async def test_eight_clients_make_1600_verb_calls_at_once_without_an_error(project: ProjectPaths) -> None:
    services = Services.open(project)
    embedded = EmbeddedMcp(services)
    await embedded.start()
    errors: list[str] = []

    async def agent(index: int) -> None:
        endpoint = embedded.open_session(
            SessionContext(
                recipe=Recipe.TASK_EXECUTION, task_id=1, session_id=f"load-{index}", discipline="backend"
            )
        )
        async with Client(
            streamable_http_client(embedded.url, http_client=authorised(endpoint.token)), mode="legacy"
        ) as client:
            for call in range(200):
                result = await client.call_tool(
                    "flag", {"what": f"agent {index} call {call}", "severity": "info", "category": "bug"}
                )
                if result.is_error:
                    errors.append(result.content[0].text)  # type: ignore[union-attr]

    try:
        with anyio.fail_after(240):
            async with anyio.create_task_group() as group:
                for index in range(8):
                    group.start_soon(agent, index)
    finally:
        await embedded.stop()
    try:
        assert errors == []
        assert len(services.signals.for_task(1)) == 1600
        assert services.db.integrity_ok()
    finally:
        services.close()
