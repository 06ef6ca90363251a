"""Serving the MCP server: stdio, a standalone HTTP process, or HTTP embedded in a running asyncio loop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from ralph_desk.domain.session import SessionContext
from ralph_desk.http_serving import Serving, bind, shown_host
from ralph_desk.mcp_server.auth import BearerGate, SessionTokens
from ralph_desk.mcp_server.idle_sessions import IdleSessions
from ralph_desk.mcp_server.origins import HeaderGate, accepted_names
from ralph_desk.mcp_server.sdk_compat import live_transports
from ralph_desk.mcp_server.server import CONTEXT_STATE_KEY
from ralph_desk.mcp_server.text_gate import TextGate

log = logging.getLogger("ralph_desk.mcp")

MCP_PATH = "/mcp"
JSON_RESPONSES = True
"""Answer each POST with one JSON body, not an SSE stream of one event: ~2 ms less server CPU per call
here. The spec requires clients to accept both (Claude Code, the Inspector and the SDK client are
tested with it). Only the per-request back-channel goes — progress, logs or requests sent while a
tool runs, which no tool here uses; `list_changed` still goes out on the GET stream."""
SESSION_IDLE_S = 6 * 3600.0
"""A session no client message reached for this long is released (its id then answers 404, and the
client opens a new one). Far longer than the SDK's 30 minutes: an agent may think for longer than that
between two calls (session_timeout_s can be hours), and its closing verb must still reach its session."""


# The SDK's own Host and Origin check matches by prefix (`localhost:80.evil.example` passed) and wants a
# port; `HeaderGate` checks them exactly instead, so the SDK's is off (its Content-Type check stays).
NO_SDK_HEADER_CHECK = TransportSecuritySettings(enable_dns_rebinding_protection=False)


class HttpHost:
    """The MCP server over Streamable HTTP as a task in the running asyncio loop, behind a bearer gate."""

    def __init__(
        self,
        server: MCPServer,
        tokens: SessionTokens,
        host: str = "127.0.0.1",
        port: int = 0,
        session_idle_s: float = SESSION_IDLE_S,
    ):
        self.server = server
        self.tokens = tokens
        self.host = host
        self.port = port
        self.session_idle_s = session_idle_s
        self._serving: Serving | None = None
        self._sweeper: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        """The endpoint agents connect to."""
        return f"http://{shown_host(self.host)}:{self.port}{MCP_PATH}"

    @property
    def running(self) -> bool:
        """Whether the server is serving."""
        return self._serving is not None and self._serving.running

    def issue(self, context: SessionContext) -> str:
        """A credential for one session's context."""
        return self.tokens.issue(context)

    def revoke(self, token: str) -> bool:
        """End a session's credential."""
        return self.tokens.revoke(token)

    async def start(self) -> None:
        """Bind and serve; a bind failure raises OSError here instead of exiting the process."""
        app = self.server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            transport_security=NO_SDK_HEADER_CHECK,
            host=self.host,
            json_response=JSON_RESPONSES,
            session_idle_timeout=self.session_idle_s,
        )
        idle = IdleSessions(app, MCP_PATH, self.session_idle_s)
        bearer = BearerGate(TextGate(idle), self.tokens, CONTEXT_STATE_KEY)
        gated: Any = HeaderGate(bearer, accepted_names(self.host))
        sock = bind(self.host, self.port)
        self.port = sock.getsockname()[1]
        self._serving = await Serving.start(gated, sock, "ralph-mcp-http")
        self._sweeper = asyncio.create_task(idle.run(), name="ralph-mcp-idle-sessions")
        log.info("MCP server listening on %s", self.url)

    async def stop(self) -> None:
        """Close live sessions, then stop serving."""
        if self._serving is None:
            return
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
            self._sweeper = None
        manager = self.server.session_manager
        # Live sessions keep a GET stream open, which would hold uvicorn's graceful shutdown.
        for transport in live_transports(manager):
            with contextlib.suppress(Exception):
                await transport.terminate()
        await self._serving.stop()
        self._serving = None
        log.info("MCP server stopped")
