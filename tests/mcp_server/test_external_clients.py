"""Official clients against the server: the MCP Inspector CLI (stdio and HTTP) and the Claude Code CLI."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ralph_desk.demo import create_demo
from ralph_desk.project import ProjectPaths
from tests.support.http_process import serving
from tests.support.npm_tools import claude_bin, claude_mcp, inspector_cmd, missing_reason

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> ProjectPaths:
    return create_demo(tmp_path_factory.mktemp("inspector") / "demo")


def ralph_mcp(root: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "ralph_desk", "mcp", "--root", str(root), *extra]


def inspect(target: list[str], *method: str) -> dict[str, object]:
    command = inspector_cmd()
    if command is None:
        pytest.skip(missing_reason("the MCP Inspector"))
    run = subprocess.run([*command, *target, *method], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    document: dict[str, object] = json.loads(run.stdout)
    return document


def test_inspector_lists_calls_and_reads_over_stdio(demo: ProjectPaths) -> None:
    target = ralph_mcp(demo.root)
    listed = inspect(target, "--method", "tools/list")
    names = {tool["name"] for tool in listed["tools"]}  # type: ignore[attr-defined]
    assert {"get_task", "ralph_status", "ralph_run"} <= names
    assert "done" not in names
    called = inspect(target, "--method", "tools/call", "--tool-name", "get_task", "--tool-arg", "id=1")
    assert called.get("isError") is not True
    assert called["structuredContent"]["id"] == 1  # type: ignore[index]
    read = inspect(target, "--method", "resources/read", "--uri", "ralph://tasks/1")
    contents = read["contents"]
    assert json.loads(contents[0]["text"])["id"] == 1  # type: ignore[index]


def test_inspector_initialises_a_fresh_folder_with_the_loop_control_tools(tmp_path: Path) -> None:
    target = ralph_mcp(tmp_path)
    listed = inspect(target, "--method", "tools/list")
    assert {tool["name"] for tool in listed["tools"]} == {"ralph_init", "ralph_validate"}  # type: ignore[attr-defined]
    validated = inspect(target, "--method", "tools/call", "--tool-name", "ralph_validate")
    assert validated["structuredContent"]["valid"] is False  # type: ignore[index]
    assert not (tmp_path / ".ralph").exists()

    made = inspect(target, "--method", "tools/call", "--tool-name", "ralph_init", "--tool-arg", "force=false")
    assert made["structuredContent"]["initialized"] is True  # type: ignore[index]
    assert json.loads((tmp_path / ".ralph" / "prd.json").read_text(encoding="utf-8"))["userStories"] == []
    names = {tool["name"] for tool in inspect(target, "--method", "tools/list")["tools"]}  # type: ignore[attr-defined]
    assert {"ralph_run", "ralph_status", "ralph_stop", "ralph_history", "ralph_understand"} <= names
    valid = inspect(target, "--method", "tools/call", "--tool-name", "ralph_validate")
    assert valid["structuredContent"] == {"success": True, "valid": True, "problems": []}
    status = inspect(target, "--method", "tools/call", "--tool-name", "ralph_status")
    assert status["structuredContent"]["status"] == "not_running"  # type: ignore[index]


def test_inspector_lints_the_tool_schemas_as_portable(demo: ProjectPaths) -> None:
    inspect(ralph_mcp(demo.root), "--method", "tools/list", "--strict")


@pytest.fixture
def http_server(demo: ProjectPaths) -> Iterator[tuple[str, str]]:
    token = "inspector-token"
    with serving(ralph_mcp(demo.root, "--transport", "http", "--token", token)) as url:
        yield url, token


def test_inspector_lists_calls_and_reads_over_http(http_server: tuple[str, str]) -> None:
    url, token = http_server
    target = [url, "--transport", "http", "--header", f"Authorization: Bearer {token}"]
    names = {tool["name"] for tool in inspect(target, "--method", "tools/list")["tools"]}  # type: ignore[attr-defined]
    assert "list_features" in names
    called = inspect(target, "--method", "tools/call", "--tool-name", "list_features")
    assert called["structuredContent"]["count"] >= 3  # type: ignore[index]
    read = inspect(target, "--method", "resources/read", "--uri", "ralph://progress")
    assert "contents" in read


def test_claude_code_reports_the_server_connected(demo: ProjectPaths, tmp_path: Path) -> None:
    binary = claude_bin()
    if binary is None:
        pytest.skip(missing_reason("Claude Code"))
    add = claude_mcp(binary, tmp_path, "add", "--scope", "user", "ralph", "--", *ralph_mcp(demo.root))
    assert add.returncode == 0, add.stderr
    listed = claude_mcp(binary, tmp_path, "list", timeout=120)
    assert re.search(r"^ralph: .*Connected", listed.stdout, re.MULTILINE), listed.stdout + listed.stderr
