"""`--log-dir`: a readable log and, beside it, one JSON line per tool call that never holds arguments."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from ralph_desk.project import init_project
from ralph_desk.services.container import Services
from tests.support.stdio_wire import mcp_command

pytestmark = pytest.mark.anyio

SECRET = "sk-live-0123456789abcdef"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_each_tool_call_is_one_json_line_beside_the_log_without_its_arguments(tmp_path: Path) -> None:
    paths = init_project(tmp_path / "proj", title="Logged")
    services = Services.open(paths)
    services.features.create("core", "Core")
    services.disciplines.create("backend", "Backend", "server", "#336699")
    services.tasks.create("core", "backend", "Keep the key out of the logs")
    services.close()
    logs = tmp_path / "elsewhere" / "logs"
    args = mcp_command(paths, "--task-id", "1", "--session-id", "sess-log", "--log-dir", str(logs))[1:]
    params = StdioServerParameters(command=sys.executable, args=args, env=dict(os.environ))
    async with Client(params, mode="legacy") as client:
        assert not (
            await client.call_tool("learned", {"text": f"the key is {SECRET}", "kind": "discovery"})
        ).is_error
        refused = await client.call_tool("flag", {"what": SECRET, "severity": "dire", "category": "bug"})
        assert refused.is_error
        assert not (await client.call_tool("done", {"summary": f"kept {SECRET} safe"})).is_error
    (log_file,) = logs.glob("*_mcp.log")
    lines = [json.loads(line) for line in log_file.with_suffix(".tools.jsonl").read_text().splitlines()]
    assert [(line["tool"], line["session"], line["outcome"]) for line in lines] == [
        ("learned", "sess-log", "ok"),
        ("flag", "sess-log", "error"),
        ("done", "sess-log", "ok"),
    ]
    assert all(set(line) == {"time", "session", "tool", "duration_ms", "outcome"} for line in lines)
    assert all(line["duration_ms"] >= 0 and line["time"].endswith("+00:00") for line in lines)
    assert SECRET not in log_file.with_suffix(".tools.jsonl").read_text()
    assert not (paths.logs_dir.exists() and list(paths.logs_dir.glob("*_mcp.log")))
