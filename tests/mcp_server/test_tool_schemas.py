"""The schemas a client is shown: each tool's arguments are its registry model's, with their limits."""

from __future__ import annotations

import pytest
from mcp import Client

from ralph_desk.domain.enums import Recipe
from ralph_desk.domain.session import SessionContext
from ralph_desk.domain.tools import REGISTRY
from ralph_desk.mcp_server.server import build_server
from ralph_desk.services.container import Services

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
