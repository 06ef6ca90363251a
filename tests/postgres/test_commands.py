"""Every command of `ralph-desk` on a PostgreSQL database, named by `--db-url` or by `RALPH_DB_URL`,
and the MCP server over stdio on it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from ralph_desk.cli import main
from ralph_desk.project import DB_URL_ENV


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(list(argv))
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


def test_every_command_works_on_postgresql_named_by_db_url(
    capsys: pytest.CaptureFixture[str], pg_url: str, tmp_path: Path
) -> None:
    root = str(tmp_path / "tidewater")
    where = ["--root", root, "--db-url", pg_url]
    run(capsys, "demo", root, "--db-url", pg_url)
    assert not (tmp_path / "tidewater" / ".ralph" / "db" / "ralph.db").exists()

    inbox: dict[str, Any] = json.loads(run(capsys, "inbox", "--json", *where))
    ask, suggestion, flag = inbox["asks"][0], inbox["suggestions"][0], inbox["flags"][0]
    other_suggestion = inbox["suggestions"][1]
    run(capsys, "answer", str(ask["id"]), "station local time", *where)
    run(capsys, "approve", str(suggestion["created_task_id"]), *where)
    run(capsys, "reject", str(other_suggestion["created_task_id"]), "--reason", "Later", *where)
    run(capsys, "triage", str(flag["id"]), "--resolution", "resolved", *where)
    after = json.loads(run(capsys, "inbox", "--json", *where))["counts"]

    assert after == {
        "asks": inbox["counts"]["asks"] - 1,
        "suggestions": inbox["counts"]["suggestions"] - 2,
        "flags": inbox["counts"]["flags"] - 1,
    }
    exported = tmp_path / "prd.json"
    run(capsys, "export-prd", str(exported), *where)
    stories = json.loads(exported.read_text(encoding="utf-8"))["userStories"]
    status = json.loads(run(capsys, "status", "--json", *where))
    assert len(stories) == sum(status["tasks"]["by_status"].values()) - status["tasks"]["by_status"].get(
        "draft", 0
    )
    run(capsys, "import-prd", str(exported), *where)
    again = json.loads(run(capsys, "status", "--json", *where))["tasks"]
    assert (again["total"], again["by_status"]) == (status["tasks"]["total"], status["tasks"]["by_status"])
    assert "OK:" in run(capsys, "validate", root, "--db-url", pg_url)
    assert "Tasks it would attempt" in run(capsys, "run", "--dry-run", *where)


def test_ralph_db_url_names_the_postgresql_database_for_every_command(
    capsys: pytest.CaptureFixture[str], pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DB_URL_ENV, pg_url)
    root = tmp_path / "harbour"
    run(capsys, "init", str(root), "--title", "Harbour on PostgreSQL")
    status = json.loads(run(capsys, "status", "--json", "--root", str(root)))

    assert status["project"]["title"] == "Harbour on PostgreSQL"
    assert not (root / ".ralph" / "db" / "ralph.db").exists()
    monkeypatch.delenv(DB_URL_ENV)
    assert main(["status", "--root", str(root)]) == 2  # the project's own SQLite file holds nothing
    assert "no project yet" in capsys.readouterr().err


@pytest.mark.anyio
async def test_the_mcp_server_over_stdio_serves_a_postgresql_project(
    capsys: pytest.CaptureFixture[str], pg_url: str, tmp_path: Path
) -> None:
    root = str(tmp_path / "tidewater")
    run(capsys, "demo", root, "--db-url", pg_url)
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "ralph_desk", "mcp", "--root", root, "--db-url", pg_url]
    )
    async with Client(stdio_client(server), mode="legacy") as client:
        task = await client.call_tool("get_task", {"id": 1})
        listed = await client.call_tool("list_features", {})

    assert not task.is_error and task.structured_content is not None
    assert task.structured_content["id"] == 1
    assert listed.structured_content is not None and listed.structured_content["count"] >= 3


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
