"""Serving the MCP server: stdio, a standalone HTTP process, or HTTP embedded in a running asyncio loop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Iterator
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from ralph_desk.domain.session import SessionContext
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


class _QuietUvicorn(uvicorn.Server):
    """uvicorn that leaves the process's signal handlers (the window's, the CLI's) alone."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


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
        self._uvicorn: _QuietUvicorn | None = None
        self._task: asyncio.Task[None] | None = None
        self._sweeper: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        """The endpoint agents connect to."""
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{shown}:{self.port}{MCP_PATH}"

    @property
    def running(self) -> bool:
        """Whether the server is serving."""
        return self._task is not None and not self._task.done()

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
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        # IPPROTO_TCP matters: asyncio sets TCP_NODELAY only then; without it each call stalls ~40 ms.
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        sock.listen(128)
        sock.set_inheritable(False)
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            gated, log_level="warning", lifespan="on", access_log=False, timeout_graceful_shutdown=2
        )
        self._uvicorn = _QuietUvicorn(config)
        self._task = asyncio.create_task(self._uvicorn.serve(sockets=[sock]), name="ralph-mcp-http")
        started = asyncio.Event()
        while not self._uvicorn.started:
            if self._task.done():
                self._task.result()
                raise RuntimeError("the MCP HTTP server exited while starting")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(started.wait(), timeout=0.01)
        self._sweeper = asyncio.create_task(idle.run(), name="ralph-mcp-idle-sessions")
        log.info("MCP server listening on %s", self.url)

    async def stop(self) -> None:
        """Close live sessions, then stop serving."""
        if self._uvicorn is None or self._task is None:
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
        self._uvicorn.should_exit = True
        await asyncio.wait_for(self._task, timeout=10)
        self._uvicorn = None
        self._task = None
        log.info("MCP server stopped")
