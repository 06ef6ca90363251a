"""One JSON line per tool call that never holds arguments: beside `--log-dir`'s readable log, and for the
window's embedded server (no log file of its own) in the project's `.ralph/logs/`."""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from ralph_desk.domain.enums import Recipe
from ralph_desk.domain.session import SessionContext
from ralph_desk.mcp_server.embedded import EmbeddedMcp
from ralph_desk.project import ProjectPaths, init_project
from ralph_desk.services.container import Services
from tests.support.stdio_wire import mcp_command

pytestmark = pytest.mark.anyio

SECRET = "sk-live-0123456789abcdef"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def logged_project(root: Path) -> ProjectPaths:
    """A project with one task of the backend discipline."""
    paths = init_project(root, title="Logged")
    services = Services.open(paths)
    services.features.create("core", "Core")
    services.disciplines.create("backend", "Backend", "server", "#336699")
    services.tasks.create("core", "backend", "Keep the key out of the logs")
    services.close()
    return paths


async def make_three_calls(client: Client) -> None:
    """A call that works, one refused (a bad severity) and a closing one, each carrying the secret."""
    assert not (
        await client.call_tool("learned", {"text": f"the key is {SECRET}", "kind": "discovery"})
    ).is_error
    refused = await client.call_tool("flag", {"what": SECRET, "severity": "dire", "category": "bug"})
    assert refused.is_error
    assert not (await client.call_tool("done", {"summary": f"kept {SECRET} safe"})).is_error


def assert_three_calls_logged(call_log: Path, session: str) -> None:
    """The call log holds the three calls, with time, session, tool, duration and outcome only."""
    text = call_log.read_text()
    lines = [json.loads(line) for line in text.splitlines()]
    assert [(line["tool"], line["session"], line["outcome"]) for line in lines] == [
        ("learned", session, "ok"),
        ("flag", session, "error"),
        ("done", session, "ok"),
    ]
    assert all(set(line) == {"time", "session", "tool", "duration_ms", "outcome"} for line in lines)
    assert all(line["duration_ms"] >= 0 and line["time"].endswith("+00:00") for line in lines)
    assert SECRET not in text


async def test_each_tool_call_is_one_json_line_beside_the_log_without_its_arguments(tmp_path: Path) -> None:
    paths = logged_project(tmp_path / "proj")
    logs = tmp_path / "elsewhere" / "logs"
    args = mcp_command(paths, "--task-id", "1", "--session-id", "sess-log", "--log-dir", str(logs))[1:]
    params = StdioServerParameters(command=sys.executable, args=args, env=dict(os.environ))
    async with Client(params, mode="legacy") as client:
        await make_three_calls(client)
    (log_file,) = logs.glob("*_mcp.log")
    assert_three_calls_logged(log_file.with_suffix(".tools.jsonl"), "sess-log")
    assert not (paths.logs_dir.exists() and list(paths.logs_dir.glob("*_mcp.log")))


async def serve_three_calls(embedded: EmbeddedMcp, session: str) -> None:
    """Start the embedded server, make the three calls as one task session over HTTP, stop it."""
    await embedded.start()
    try:
        context = SessionContext(
            recipe=Recipe.TASK_EXECUTION, task_id=1, session_id=session, discipline="backend"
        )
        token = embedded.open_session(context).token
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
        async with Client(streamable_http_client(embedded.url, http_client=http), mode="legacy") as client:
            await make_three_calls(client)
    finally:
        await embedded.stop()


async def test_the_window_server_logs_each_call_in_the_project_logs_without_its_arguments(
    tmp_path: Path,
) -> None:
    from ralph_desk.app import embedded_mcp  # the window's own composition of its server

    paths = logged_project(tmp_path / "proj")
    services = Services.open(paths)
    try:
        embedded, _ = embedded_mcp(services)
        await serve_three_calls(embedded, "sess-window")
    finally:
        services.close()
    (call_log,) = paths.logs_dir.glob("*_window.tools.jsonl")
    assert call_log == embedded.call_log
    assert_three_calls_logged(call_log, "sess-window")
    assert oct(call_log.stat().st_mode & 0o777) == oct(0o600)


async def test_a_call_log_behind_a_link_is_not_written_and_said_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    paths = logged_project(tmp_path / "proj")
    outside = tmp_path / "outside"
    outside.mkdir()
    paths.logs_dir.rmdir()
    paths.logs_dir.symlink_to(outside, target_is_directory=True)
    services = Services.open(paths)
    try:
        with caplog.at_level(logging.WARNING, logger="ralph_desk.mcp"):
            await serve_three_calls(EmbeddedMcp(services), "sess-linked")
    finally:
        services.close()
    assert list(outside.iterdir()) == []
    said = [r for r in caplog.records if "could not write the tool-call log" in r.getMessage()]
    assert len(said) == 1
