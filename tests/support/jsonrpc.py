"""JSON-RPC frames that tests write by hand to an MCP server, over stdio or HTTP."""

from __future__ import annotations

from typing import Any

# The protocol version Claude Code speaks (legacy, with the initialize handshake).
PROTOCOL_VERSION = "2025-11-25"

INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
INITIALIZED: dict[str, Any] = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def request(request_id: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A request frame."""
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}}


def tool_call(request_id: int, name: str, arguments: Any) -> dict[str, Any]:
    """A `tools/call` request frame."""
    return request(request_id, "tools/call", {"name": name, "arguments": arguments})
