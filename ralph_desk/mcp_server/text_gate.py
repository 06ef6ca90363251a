"""Requests holding text UTF-8 cannot store, refused as JSON-RPC -32602 errors naming the place.

Python's JSON reader takes an escaped lone surrogate (`"\\ud800"`), the SDK's does not: over stdio it
drops such a frame unanswered, over HTTP it answers a bare 400 parse error. Both transports answer
with `refusal` instead (`params.arguments.title: not allowed; allowed: …`), from the one text check.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import MutableMapping
from typing import Any

import mcp_types as types
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE

from ralph_desk.domain.text import STORABLE_WORDING, first_surrogate
from ralph_desk.mcp_server.auth import ASGIApp, Receive, Scope, Send

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
"""A JSON escape of a surrogate code point: only a body holding one is parsed here."""


def refusal(frame: object) -> types.JSONRPCError | None:
    """The error answering a request frame whose params hold a lone surrogate, else None."""
    if not isinstance(frame, dict) or not isinstance(frame.get("id"), int | str) or "method" not in frame:
        return None
    place = first_surrogate(frame.get("params"), root="params")
    if place is None:
        return None
    message = f"{place}: not allowed; allowed: {STORABLE_WORDING}"
    error = types.ErrorData(code=types.INVALID_PARAMS, message=message)
    return types.JSONRPCError(jsonrpc="2.0", id=frame["id"], error=error)


def refusal_of_body(body: bytes) -> types.JSONRPCError | None:
    """`refusal` of a request body (None for one without a surrogate escape, or not JSON)."""
    if _SURROGATE_ESCAPE.search(body) is None:
        return None
    try:
        frame = json.loads(body)
    except ValueError:
        return None
    return refusal(frame)


class TextGate:
    """ASGI middleware: a POST whose JSON-RPC request holds a lone surrogate is answered with `refusal`."""

    def __init__(self, app: ASGIApp, max_body_size: int = DEFAULT_MAX_REQUEST_BODY_SIZE) -> None:
        self.app = app
        self.max_body_size = max_body_size

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        taken: deque[MutableMapping[str, Any]] = deque()
        body = bytearray()
        while len(body) <= self.max_body_size:  # past it the SDK answers 413: only pass the body on
            message = await receive()
            taken.append(message)
            if message["type"] != "http.request":
                break
            body.extend(message.get("body", b""))
            if not message.get("more_body", False):
                answer = refusal_of_body(bytes(body))
                if answer is not None:
                    await _answer(send, answer)
                    return
                break

        async def replay() -> MutableMapping[str, Any]:
            return taken.popleft() if taken else await receive()

        await self.app(scope, replay, send)


async def _answer(send: Send, error: types.JSONRPCError) -> None:
    body = error.model_dump_json(by_alias=True, exclude_unset=True).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})
