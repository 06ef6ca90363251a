"""The tool schemas kept in tool_schemas.json: current, used when current, ignored when stale."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client
from pydantic import BaseModel

from ralph_desk.domain.tools import REGISTRY
from ralph_desk.mcp_server import handlers, schemas
from ralph_desk.mcp_server.binding import HANDLERS
from ralph_desk.mcp_server.server import build_server
from ralph_desk.services.container import Services

REFRESH = "python -m ralph_desk.mcp_server.schemas"


def _result_models() -> dict[str, type[BaseModel]]:
    handlers.load()
    return {name: bound.result_model for name, bound in HANDLERS.items()}


def test_the_committed_file_is_current() -> None:
    kept = json.loads(schemas.SCHEMA_FILE.read_text(encoding="utf-8"))
    assert kept["fingerprint"] == schemas.fingerprint(), f"tool_schemas.json is stale: run `{REFRESH}`"
    assert kept["tools"] == schemas.generate(_result_models())["tools"], f"run `{REFRESH}`"


def test_every_served_tool_has_kept_schemas_with_its_limits() -> None:
    kept = schemas.stored()
    assert set(kept) == set(_result_models())
    update = kept["update_task"]["input"]
    assert update["additionalProperties"] is False
    assert update["properties"]["title"]["anyOf"][0]["maxLength"] == 500
    assert kept["get_task"]["output"]["type"] == "object"


@pytest.mark.anyio
async def test_a_server_lists_the_kept_schemas(services: Services) -> None:
    async with Client(build_server(services)) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    kept = schemas.stored()
    assert "get_task" in listed
    for name, tool in listed.items():
        assert tool.input_schema == kept[name]["input"], name
        assert tool.output_schema == kept[name]["output"], name


def test_a_stale_file_is_ignored_and_the_schemas_are_built_live(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stale = tmp_path / "tool_schemas.json"
    wrong = {"input": {"type": "object", "properties": {}}, "output": {"type": "object"}}
    stale.write_text(json.dumps({"fingerprint": "an older build", "tools": {"get_task": wrong}}))
    monkeypatch.setattr(schemas, "SCHEMA_FILE", stale)
    schemas.stored.cache_clear()
    try:
        assert schemas.stored() == {}
        built, _ = schemas.schemas_of(REGISTRY["get_task"], _result_models()["get_task"])
    finally:
        schemas.stored.cache_clear()
    assert built == schemas.input_schema(REGISTRY["get_task"])
    assert "id" in built["properties"]


def test_an_unreadable_file_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    broken = tmp_path / "tool_schemas.json"
    broken.write_text("{ not json")
    monkeypatch.setattr(schemas, "SCHEMA_FILE", broken)
    schemas.stored.cache_clear()
    try:
        assert schemas.stored() == {}
    finally:
        schemas.stored.cache_clear()
