"""Streamable HTTP sessions no client message reached for a long time, released.

The SDK's own idle timeout (`session_idle_timeout`, given too) counts an open GET stream as activity,
so a client that keeps its stream open and never calls again — an agent's leftover child, a client
whose credential was revoked — would hold its session, and the server's memory, for ever. Here only
the client's own messages (POST) count: a session with none for `idle_s` seconds, and none in
flight, is ended through the SDK's public door, a DELETE naming it, which also closes its stream.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, MutableMapping
from typing import Any

from ralph_desk.mcp_server.auth import ASGIApp, Receive, Scope, Send

log = logging.getLogger("ralph_desk.mcp")

SESSION_HEADER = b"mcp-session-id"
MOST_SWEEP_S = 60.0  # how late past its idle time a session may be released


class IdleSessions:
    """ASGI middleware: notes each session's last client message; `sweep` ends those idle too long."""

    def __init__(
        self, app: ASGIApp, path: str, idle_s: float, clock: Callable[[], float] | None = None
    ) -> None:
        if not idle_s > 0:
            raise ValueError(f"idle_s: {idle_s!r} is not allowed; allowed: a number of seconds above 0")
        self.app = app
        self.path = path
        self.idle_s = idle_s
        self._clock = clock or (lambda: asyncio.get_running_loop().time())
        self._last: dict[str, float] = {}  # session id → when a client message last came or ended
        self._busy: dict[str, int] = {}  # session id → its messages being served now

    @property
    def sweep_interval_s(self) -> float:
        """How often `run` sweeps: often enough that a session outlives its idle time by a quarter at most."""
        return min(self.idle_s / 4, MOST_SWEEP_S)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = scope.get("method") if scope["type"] == "http" else None
        session = _session_of(scope.get("headers", [])) if method in ("POST", "DELETE") else None
        if method != "POST":
            await self.app(scope, receive, send)
            if session is not None:  # the client ended it
                self._last.pop(session, None)
            return
        answer: dict[str, Any] = {}

        async def noting(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                answer.update(status=message["status"], opened=_session_of(message.get("headers", [])))
            await send(message)

        self._begin(session)
        try:
            await self.app(scope, receive, noting)
        finally:
            self._end(session, known=answer.get("status") != 404)
            if session is None and answer.get("opened"):
                self._last[answer["opened"]] = self._clock()  # a new session: idle from its first answer

    def _begin(self, session: str | None) -> None:
        if session is not None:
            self._busy[session] = self._busy.get(session, 0) + 1
            self._last[session] = self._clock()

    def _end(self, session: str | None, known: bool) -> None:
        if session is None:
            return
        self._busy[session] -= 1
        if not self._busy[session]:
            del self._busy[session]
        if known:
            self._last[session] = self._clock()
        elif session not in self._busy:
            self._last.pop(session, None)  # not a session of the server's (or no longer): nothing to hold

    def idle(self) -> list[str]:
        """The sessions with no client message served or in flight for `idle_s` seconds."""
        since = self._clock() - self.idle_s
        return [
            session for session, last in self._last.items() if last <= since and session not in self._busy
        ]

    async def sweep(self) -> list[str]:
        """End every idle session (a DELETE to the SDK's app); the ones ended."""
        ended = self.idle()
        for session in ended:
            self._last.pop(session, None)
            status = await self._delete(session)
            log.info("MCP session %s idle for %s s: released (%s)", session, f"{self.idle_s:g}", status)
        return ended

    async def run(self) -> None:
        """Sweep every `sweep_interval_s` until cancelled."""
        while True:
            await asyncio.sleep(self.sweep_interval_s)
            try:
                await self.sweep()
            except Exception:  # the top of the sweeper's task: one failed sweep must not end the next
                log.exception("releasing idle MCP sessions failed")

    async def _delete(self, session: str) -> int | None:
        """The SDK's answer to a DELETE of `session` (200 ended; 404 it had already gone)."""
        answered: list[int] = []

        async def receive() -> MutableMapping[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                answered.append(int(message["status"]))

        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "DELETE",
            "scheme": "http",
            "path": self.path,
            "raw_path": self.path.encode("ascii"),
            "root_path": "",
            "query_string": b"",
            "headers": [(SESSION_HEADER, session.encode("latin-1"))],
            "client": None,
            "server": None,
            "state": {},
        }
        await self.app(scope, receive, send)
        return answered[0] if answered else None


def _session_of(headers: Any) -> str | None:
    for key, value in headers:
        if bytes(key).lower() == SESSION_HEADER:
            return bytes(value).decode("latin-1")
    return None
