"""Bearer credentials for the HTTP server: each maps to one session's context and can be revoked."""

from __future__ import annotations

import hmac
import json
import secrets
import threading
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from ralph_desk.domain.session import SessionContext

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class SessionTokens:
    """The live credentials: token → session context. Thread-safe."""

    def __init__(self) -> None:
        self._contexts: dict[str, SessionContext] = {}
        self._lock = threading.Lock()

    def issue(self, context: SessionContext) -> str:
        """A fresh random credential for `context`."""
        token = secrets.token_urlsafe(32)
        with self._lock:
            self._contexts[token] = context
        return token

    def register(self, token: str, context: SessionContext) -> None:
        """Accept a caller-chosen credential (the `--token` of a standalone server)."""
        with self._lock:
            self._contexts[token] = context

    def revoke(self, token: str) -> bool:
        """End a credential; later requests with it are refused."""
        with self._lock:
            return self._contexts.pop(token, None) is not None

    def lookup(self, token: str) -> SessionContext | None:
        """The context of a credential, comparing in constant time."""
        with self._lock:
            items = list(self._contexts.items())
        found = None
        for known, context in items:
            if hmac.compare_digest(known.encode(), token.encode()):
                found = context
        return found

    def __len__(self) -> int:
        with self._lock:
            return len(self._contexts)


class BearerGate:
    """ASGI middleware: 401 without a live bearer credential; its session context goes into scope state."""

    def __init__(self, app: ASGIApp, tokens: SessionTokens, state_key: str) -> None:
        self.app = app
        self.tokens = tokens
        self.state_key = state_key

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        context = self.tokens.lookup(self._bearer(scope) or "")
        if context is None:
            await self._unauthorized(send)
            return
        scope.setdefault("state", {})[self.state_key] = context
        await self.app(scope, receive, send)

    @staticmethod
    def _bearer(scope: Scope) -> str | None:
        for key, value in scope.get("headers", []):
            if key == b"authorization":
                scheme, _, token = bytes(value).decode("latin-1").partition(" ")
                if scheme.lower() == "bearer" and token:
                    return str(token.strip())
        return None

    @staticmethod
    async def _unauthorized(send: Send) -> None:
        body = json.dumps(
            {"error": "unauthorized", "message": "a valid 'Authorization: Bearer <token>' header is required"}
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
