"""What the loop-control tests share: an IDE client of an embedded server, and the held stand-in agent."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from ralph_desk.domain.enums import Recipe
from ralph_desk.domain.session import SessionContext
from ralph_desk.mcp_server.embedded import EmbeddedMcp

HELD_AGENT = Path(__file__).with_name("held_agent.py")
"""`python held_agent.py PORT`: connects to PORT when it starts, then waits until it is stopped."""


def ide_client(host: EmbeddedMcp) -> AbstractAsyncContextManager[Client]:
    """An IDE client of an embedded server, with an `ide` session's credential."""
    token = host.open_session(SessionContext(recipe=Recipe.IDE, session_id="ide")).token
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    return Client(streamable_http_client(host.url, http_client=http), mode="legacy")
