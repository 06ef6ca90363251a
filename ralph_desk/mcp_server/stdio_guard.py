"""The stdio transport, guarded: every request gets an answer, and nothing ends the server but its client.

Three gaps of the bare transport are closed here. A frame holding a lone surrogate (`"\\ud800"`) is
valid to Python's JSON reader but not to the SDK's, which drops it unanswered: it is refused naming
the place (`text_gate.refusal`, as over HTTP). An answer that cannot be written as UTF-8 would end the
writer and with it the server: it becomes an error for that request. And when stdin closes, requests
already taken are run to their answer before the server stops (a bare transport cancels them, while a
tool's worker thread may still commit: carried out, never answered).
"""

from __future__ import annotations

import json
import logging
from typing import Any, Self

import anyio
import mcp_types as types
from mcp.server import NotificationOptions
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from ralph_desk.domain.text import STORABLE_WORDING
from ralph_desk.mcp_server.sdk_compat import ReadStream, WriteStream, lowlevel_server
from ralph_desk.mcp_server.text_gate import refusal

log = logging.getLogger("ralph_desk.mcp")

DRAIN_TIMEOUT_S = 120.0
"""How long requests in flight when stdin closes may take to finish; past it they are cancelled."""


def refusal_of(error: Exception) -> SessionMessage | None:
    """The answer to a frame the SDK could not read: for a request holding a lone surrogate, naming it."""
    if not isinstance(error, ValidationError):
        return None
    raw = next((item.get("input") for item in error.errors() if item["type"] == "json_invalid"), None)
    if not isinstance(raw, str | bytes):
        return None
    try:
        frame = json.loads(raw)
    except ValueError:
        return None
    answer = refusal(frame)
    return SessionMessage(answer) if answer is not None else None


def _error(request_id: types.RequestId, code: int, message: str) -> SessionMessage:
    error = types.ErrorData(code=code, message=message)
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


def writable(item: SessionMessage) -> SessionMessage:
    """`item`, or for an answer that cannot be written as UTF-8, an error answering the same request."""
    try:
        item.message.model_dump_json(by_alias=True, exclude_unset=True)
    except PydanticSerializationError:
        request_id = getattr(item.message, "id", None)
        log.error("an answer to request %r held text that cannot be written as UTF-8", request_id)
        if request_id is None:
            raise
        message = f"the answer held text that is not {STORABLE_WORDING}"
        return _error(request_id, types.INTERNAL_ERROR, message)
    return item


def _cancelled_id(message: Any) -> types.RequestId | None:
    """The id a `notifications/cancelled` names, else None."""
    if not isinstance(message, types.JSONRPCNotification) or message.method != "notifications/cancelled":
        return None
    request_id = (message.params or {}).get("requestId")
    return request_id if isinstance(request_id, int | str) else None


class _InFlight:
    """The ids of requests taken and not yet answered; `idle` is set whenever there are none."""

    def __init__(self) -> None:
        self.ids: set[types.RequestId] = set()
        self.idle = anyio.Event()
        self.idle.set()

    def taken(self, request_id: types.RequestId) -> None:
        if not self.ids:
            self.idle = anyio.Event()
        self.ids.add(request_id)

    def answered(self, request_id: types.RequestId) -> None:
        self.ids.discard(request_id)
        if not self.ids:
            self.idle.set()


class _Incoming:
    """The server's read side: frames the SDK could not read are answered here; requests are counted.

    It wraps the transport's own stream, so that a frame reaches the server without a relay task. When
    stdin closes, the end of the stream waits (up to `drain_timeout_s`) for the requests in flight.
    """

    def __init__(
        self,
        wire_in: ReadStream[SessionMessage | Exception],
        wire_out: WriteStream[SessionMessage],
        in_flight: _InFlight,
        drain_timeout_s: float,
    ) -> None:
        self.wire_in = wire_in
        self.wire_out = wire_out
        self.in_flight = in_flight
        self.drain_timeout_s = drain_timeout_s

    @property
    def last_context(self) -> Any:
        """The sender's context of the last frame, which the SDK runs its handler in."""
        return getattr(self.wire_in, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        while True:
            try:
                item = await self.wire_in.receive()
            except anyio.EndOfStream:
                await self._drain()
                raise
            if isinstance(item, Exception):
                answer = refusal_of(item)
                if answer is not None:
                    await self.wire_out.send(answer)
                    continue
            elif isinstance(item.message, types.JSONRPCRequest):
                self.in_flight.taken(item.message.id)
            elif (cancelled := _cancelled_id(item.message)) is not None:
                self.in_flight.answered(cancelled)  # a cancelled request gets no answer
            return item

    async def _drain(self) -> None:
        with anyio.move_on_after(self.drain_timeout_s) as waited:
            await self.in_flight.idle.wait()
        if waited.cancelled_caught:
            log.warning("stdin closed; %d request(s) still running are cancelled", len(self.in_flight.ids))

    def __aiter__(self) -> _Incoming:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self.wire_in.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class _Outgoing:
    """The server's write side: each answer made writable, then counted as answered once sent."""

    def __init__(self, wire_out: WriteStream[SessionMessage], in_flight: _InFlight) -> None:
        self.wire_out = wire_out
        self.in_flight = in_flight

    async def send(self, item: SessionMessage, /) -> None:
        answer = writable(item)
        await self.wire_out.send(answer)
        sent = answer.message
        if isinstance(sent, types.JSONRPCResponse | types.JSONRPCError) and sent.id is not None:
            self.in_flight.answered(sent.id)

    async def aclose(self) -> None:
        await self.wire_out.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


async def serve_guarded(server: MCPServer, drain_timeout_s: float = DRAIN_TIMEOUT_S) -> None:
    """Serve `server` over the process's stdin and stdout until the client closes stdin."""
    lowlevel = lowlevel_server(server)
    in_flight = _InFlight()
    async with stdio_server() as (wire_in, wire_out):
        # The tool list changes once ralph_init makes a fresh folder a project (`bootstrap`).
        options = lowlevel.create_initialization_options(NotificationOptions(tools_changed=True))
        incoming = _Incoming(wire_in, wire_out, in_flight, drain_timeout_s)
        await lowlevel.run(incoming, _Outgoing(wire_out, in_flight), options)
