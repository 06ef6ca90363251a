"""Every private part of the MCP SDK this package relies on, in one place, each with a test of its shape.

The SDK (`mcp` 2.3) offers no public door for these; `tests/mcp_server/test_sdk_compat.py` fails
when an upgrade moves or changes one, so that it is met here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata

# What a server's read and write streams must offer (the SDK's own transports' streams do).
from mcp.shared._stream_protocols import ReadStream as ReadStream
from mcp.shared._stream_protocols import WriteStream as WriteStream
from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:  # the HTTP stack: a stdio server never imports it
    from mcp.server.streamable_http import StreamableHTTPServerTransport
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager


def lowlevel_server(server: MCPServer) -> Server[Any]:
    """The low-level server an `MCPServer` wraps: its own `run_stdio_async` drives the same object."""
    return server._lowlevel_server


def live_transports(manager: StreamableHTTPSessionManager) -> Iterable[StreamableHTTPServerTransport]:
    """The transports of the HTTP sessions alive now (the manager lists them nowhere public)."""
    return list(manager._server_instances.values())


class ArgumentsAsSent(ArgModelBase):
    """A tool's arguments as sent, for the SDK to hand on to the tool, which validates them itself.

    The registry's input model is the one schema and the one validator of a tool's arguments. Letting
    the SDK derive a second model from a signature cost ~3 ms per tool at start-up, and its JSON
    pre-parsing of text arguments turned a description reading `null` or `[0]` into that value.
    """

    model_config = ConfigDict(extra="allow")

    def model_dump_one_level(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


def tool_metadata(result_model: type[BaseModel]) -> FuncMetadata:
    """What the SDK knows of a tool's function: arguments passed as sent; results of `result_model`."""
    return FuncMetadata(arg_model=ArgumentsAsSent, output_model=result_model)
