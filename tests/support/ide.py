"""What the loop-control tests share: IDE clients, their calls, and the held stand-in agent."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
from anyio.abc import SocketAttribute, SocketListener, SocketStream
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from ralph_desk.domain.enums import Recipe
from ralph_desk.domain.session import SessionContext
from ralph_desk.mcp_server.embedded import EmbeddedMcp
from ralph_desk.project import ProjectPaths, update_config

HELD_AGENT = Path(__file__).with_name("held_agent.py")
"""`python held_agent.py PORT`: connects to PORT, sends its pid when it starts, then waits until stopped."""
WAIT_S = 120

CallResult = dict[str, Any]


def ide_client(host: EmbeddedMcp) -> AbstractAsyncContextManager[Client]:
    """An IDE client of an embedded server, with an `ide` session's credential."""
    token = host.open_session(SessionContext(recipe=Recipe.IDE, session_id="ide")).token
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    return Client(streamable_http_client(host.url, http_client=http), mode="legacy")


def use_command_agent(paths: ProjectPaths, *words: str) -> None:
    """Make the project's agent the command template `python WORDS…`."""
    update_config(paths, agent="command", agent_command=[sys.executable, *words])


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> CallResult:
    """A tool's structured result, or its structured error under "error"."""
    result = await client.call_tool(tool, arguments)
    if result.is_error:
        return {"error": json.loads(result.content[0].text)}  # type: ignore[union-attr]
    document: CallResult = result.structured_content or {}
    return document


@asynccontextmanager
async def agent_line() -> AsyncIterator[tuple[int, SocketListener]]:
    """A loopback listener the held agent connects to when it starts."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    async with listener:
        (single,) = listener.listeners
        yield single.extra(SocketAttribute.local_port), single


async def agent_started(listener: SocketListener) -> SocketStream:
    """Wait, bounded, for the held agent to connect."""
    with anyio.fail_after(WAIT_S):
        return await listener.accept()


async def agent_pid(stream: SocketStream) -> int:
    """The process id the held agent sends first."""
    received = b""
    with anyio.fail_after(WAIT_S):
        while not received.endswith(b"\n"):
            received += await stream.receive()
    return int(received)


async def agent_gone(stream: SocketStream) -> None:
    """Wait, bounded, until the held agent's end of the line closes (its process has ended)."""
    with anyio.fail_after(WAIT_S):
        try:
            while await stream.receive():
                pass
        except (anyio.EndOfStream, anyio.BrokenResourceError, ConnectionResetError):
            return
