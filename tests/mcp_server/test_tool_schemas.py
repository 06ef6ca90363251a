"""The schemas a client is shown: each tool's arguments are its registry model's, with their limits."""

from __future__ import annotations

import pytest
from mcp import Client

from ralph_desk.domain.enums import Recipe
from ralph_desk.domain.session import SessionContext
from ralph_desk.domain.tools import REGISTRY
from ralph_desk.mcp_server.server import build_server
from ralph_desk.services.container import Services
from tests.mcp_server.conftest import Demo

pytestmark = pytest.mark.anyio


async def test_every_tool_lists_its_registry_models_schema_with_the_limits(services: Services) -> None:
    async with Client(build_server(services, SessionContext(recipe=Recipe.OPUS_REVIEW))) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert "get_task" in listed and "update_task" in listed
    for name, tool in listed.items():
        assert tool.input_schema == REGISTRY[name].input_model.model_json_schema(by_alias=True), name
    update = listed["update_task"].input_schema
    assert update["additionalProperties"] is False
    assert update["properties"]["title"]["anyOf"][0]["maxLength"] == 500
    output = listed["get_task"].output_schema
    assert output is not None and output["type"] == "object" and "title" in output["properties"]


def test_no_tool_takes_disabled_tools_so_agents_cannot_change_their_own_tools() -> None:
    takers = [name for name, spec in REGISTRY.items() if "disabled_tools" in spec.input_model.model_fields]
    assert takers == []


async def test_update_discipline_refuses_disabled_tools_over_the_wire(demo: Demo, services: Services) -> None:
    before = services.disciplines.get("docs").disabled_tools
    async with Client(build_server(services, SessionContext(recipe=Recipe.DISCUSS))) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert "disabled_tools" not in listed["update_discipline"].input_schema["properties"]
        result = await client.call_tool("update_discipline", {"name": "docs", "disabled_tools": []})
    assert result.is_error
    assert services.disciplines.get("docs").disabled_tools == before
