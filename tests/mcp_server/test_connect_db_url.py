"""`ralph-desk connect` on a project whose database is not its own SQLite file: the config says where."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from ralph_desk.cli import main
from ralph_desk.mcp_server.clients import stdio_launch
from ralph_desk.project import DB_URL_ENV, ProjectPaths, init_project
from ralph_desk.store.urls import sqlite_url


@pytest.fixture
def project(tmp_path: Path) -> ProjectPaths:
    return init_project(tmp_path / "proj", title="Local")


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The URL of another project's SQLite database, titled 'Elsewhere'."""
    monkeypatch.delenv(DB_URL_ENV, raising=False)
    other = init_project(tmp_path / "other", title="Elsewhere")
    return sqlite_url(other.db_file)


def claude_args(project: ProjectPaths, capsys: pytest.CaptureFixture[str], *extra: str) -> list[str]:
    assert main(["connect", "--root", str(project.root), "--client", "claude", *extra]) == 0
    entry = json.loads(capsys.readouterr().out)["mcpServers"]["ralph"]
    return [str(arg) for arg in entry["args"]]


def test_a_db_url_given_to_connect_is_in_the_stdio_config(
    project: ProjectPaths, capsys: pytest.CaptureFixture[str]
) -> None:
    url = "sqlite:////srv/ralph/shared.db"

    args = claude_args(project, capsys, "--db-url", url)

    assert args[args.index("--db-url") + 1] == url
    assert args[-4:] == ["--root", str(project.root), "--transport", "stdio"]


@pytest.mark.sqlite_only
def test_the_database_url_from_the_environment_is_in_the_stdio_config(
    project: ProjectPaths, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    url = "sqlite:////srv/ralph/from-env.db"
    monkeypatch.setenv(DB_URL_ENV, url)

    args = claude_args(project, capsys)

    assert args[args.index("--db-url") + 1] == url


@pytest.mark.sqlite_only
def test_the_projects_own_database_needs_no_db_url(
    project: ProjectPaths, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(DB_URL_ENV, raising=False)

    assert "--db-url" not in claude_args(project, capsys)
    assert "--db-url" not in claude_args(project, capsys, "--db-url", sqlite_url(project.db_file))


def test_the_http_server_command_carries_the_db_url(
    project: ProjectPaths, capsys: pytest.CaptureFixture[str]
) -> None:
    url = "sqlite:////srv/ralph/shared.db"
    argv = ["connect", "--root", str(project.root), "--client", "claude", "--transport", "http"]

    assert main([*argv, "--db-url", url]) == 0

    hint = next(line for line in capsys.readouterr().err.splitlines() if "start the server" in line)
    assert f"--db-url {shlex.quote(url)}" in hint


def test_the_launch_leaves_the_db_url_out_when_none_is_given(project: ProjectPaths) -> None:
    assert "--db-url" not in stdio_launch(project.root).args


@pytest.mark.sqlite_only
@pytest.mark.anyio
async def test_the_written_stdio_config_serves_the_database_it_names(
    project: ProjectPaths, elsewhere: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["connect", "--root", str(project.root), "--client", "claude", "--db-url", elsewhere]) == 0
    entry = json.loads(capsys.readouterr().out)["mcpServers"]["ralph"]
    params = StdioServerParameters(command=str(entry["command"]), args=[str(arg) for arg in entry["args"]])

    async with Client(params, mode="legacy") as client:
        result = await client.call_tool("get_project_info", {})

    assert result.structured_content is not None
    assert result.structured_content["title"] == "Elsewhere"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
