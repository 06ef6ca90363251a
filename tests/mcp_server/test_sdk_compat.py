"""The private parts of the MCP SDK that `ralph_desk.mcp_server.sdk_compat` reaches are still there."""

from __future__ import annotations

import pytest
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from pydantic import BaseModel

from ralph_desk.mcp_server import sdk_compat

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Answer(BaseModel):
    value: int


def test_an_mcp_server_wraps_a_lowlevel_server() -> None:
    server = MCPServer("compat")
    assert isinstance(sdk_compat.lowlevel_server(server), Server)


def test_the_session_manager_keeps_its_live_transports_by_session_id() -> None:
    server = MCPServer("compat")
    server.streamable_http_app()
    manager = server.session_manager
    assert isinstance(vars(manager)["_server_instances"], dict)
    assert list(sdk_compat.live_transports(manager)) == []


def test_the_stream_protocols_name_what_a_servers_streams_offer() -> None:
    read = {"receive", "aclose", "__aiter__", "__anext__", "__aenter__", "__aexit__"}
    assert read <= set(vars(sdk_compat.ReadStream))
    assert {"send", "aclose", "__aenter__", "__aexit__"} <= set(vars(sdk_compat.WriteStream))


def test_tool_metadata_hands_arguments_on_as_sent_and_derives_the_output_schema() -> None:
    metadata = sdk_compat.tool_metadata(Answer)
    # No pre-parsing: a text reading like JSON stays a text; every name passes (the tool validates).
    assert metadata.validate_arguments({"text": "null", "list": "[0]", "n": 1}) == {
        "text": "null",
        "list": "[0]",
        "n": 1,
    }
    assert metadata.output_schema is not None
    assert metadata.output_schema["properties"] == Answer.model_json_schema()["properties"]


def test_a_tool_is_built_from_its_metadata_and_the_input_schema_given() -> None:
    def answer(ctx: object, **arguments: object) -> Answer:
        return Answer(value=1)

    tool = Tool(
        fn=answer,
        name="answer",
        description="Answer.",
        parameters={"type": "object", "properties": {}},
        fn_metadata=sdk_compat.tool_metadata(Answer),
        is_async=False,
        context_kwarg="ctx",
    )
    assert tool.output_schema == sdk_compat.tool_metadata(Answer).output_schema
    assert tool.parameters == {"type": "object", "properties": {}}
