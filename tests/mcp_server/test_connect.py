"""`ralph-desk connect`: a ready configuration in each client's own format, private, and one that works."""

from __future__ import annotations

import json
import stat
import tomllib
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from ralph_desk.cli import main
from ralph_desk.mcp_server.clients import CLIENTS
from ralph_desk.project import ProjectPaths, init_project

EXPECTED_FILES = {
    "claude": "claude.mcp.json",
    "vscode": "vscode.mcp.json",
    "jetbrains": "jetbrains.mcp.json",
    "cursor": "cursor.mcp.json",
    "copilot": "copilot.mcp-config.json",
    "codex": "codex.config.toml",
}


@pytest.fixture
def project(tmp_path: Path) -> ProjectPaths:
    return init_project(tmp_path / "proj", title="Connect test")


def connect(project: ProjectPaths, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[str, Path]:
    client = extra[extra.index("--client") + 1]
    assert main(["connect", "--root", str(project.root), *extra]) == 0
    written = project.clients_dir / EXPECTED_FILES[client]
    return capsys.readouterr().out, written


def server_entry(client: str, text: str) -> dict[str, object]:
    if client == "codex":
        entry: dict[str, object] = tomllib.loads(text)["mcp_servers"]["ralph"]
        return entry
    document = json.loads(text)
    key = "servers" if client in ("vscode", "jetbrains") else "mcpServers"
    server: dict[str, object] = document[key]["ralph"]
    return server


@pytest.mark.parametrize("client", CLIENTS)
def test_each_client_gets_a_private_stdio_config_in_its_own_format(
    client: str, project: ProjectPaths, capsys: pytest.CaptureFixture[str]
) -> None:
    printed, written = connect(project, capsys, "--client", client)
    assert written.read_text() == printed
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    entry = server_entry(client, printed)
    args = entry["args"]
    assert isinstance(args, list) and args[-4:] == ["--root", str(project.root), "--transport", "stdio"]
    if client == "copilot":
        assert entry["type"] == "local" and entry["tools"] == ["*"]


@pytest.mark.parametrize("client", CLIENTS)
def test_each_client_gets_an_http_config_with_the_bearer_token(
    client: str, project: ProjectPaths, capsys: pytest.CaptureFixture[str]
) -> None:
    printed, _ = connect(
        project, capsys, "--client", client, "--transport", "http", "--port", "9123", "--token", "t0k"
    )
    entry = server_entry(client, printed)
    assert entry["url"] == "http://127.0.0.1:9123/mcp"
    headers = entry["http_headers"] if client == "codex" else entry["headers"]
    assert headers == {"Authorization": "Bearer t0k"}


def test_connect_refuses_a_folder_without_a_project(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["connect", "--root", str(tmp_path), "--client", "claude"]) == 2
    assert "has no .ralph/ folder" in capsys.readouterr().err


@pytest.mark.anyio
async def test_the_written_stdio_config_starts_a_working_server(
    project: ProjectPaths, capsys: pytest.CaptureFixture[str]
) -> None:
    printed, _ = connect(project, capsys, "--client", "claude")
    entry = server_entry("claude", printed)
    command, args = str(entry["command"]), [str(arg) for arg in entry["args"]]  # type: ignore[attr-defined]
    params = StdioServerParameters(command=command, args=args)
    async with Client(params, mode="legacy") as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert "ralph_status" in names


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
