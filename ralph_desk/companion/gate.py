"""The one door into the companion app: exact Host, same Origin, small bodies, a paired device's cookie.

Everything is refused before the app sees it, and every answer carries headers that keep the page
from being framed, cached or fed foreign script.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio

from ralph_desk.domain.records import Device

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
Identify = Callable[[str], Awaitable[Device | None]]

COOKIE = "ralph_companion"
BODY_LIMIT = 64 * 1024
BODY_DEADLINE_S = 10.0
TOO_LARGE = f"the body is too large; allowed: up to {BODY_LIMIT // 1024} KiB"
OPEN_PATHS = frozenset({"/pair"})
OPEN_PREFIXES = ("/static/",)
SAFE_METHODS = frozenset({"GET", "HEAD"})
ALLOWED_METHODS = SAFE_METHODS | {"POST"}
SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; "
        b"base-uri 'none'; form-action 'self'",
    ),
    (b"x-frame-options", b"DENY"),
    # Not `no-referrer`: under it a browser's form POST sends `Origin: null`, which the Origin check refuses.
    (b"referrer-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
    (b"x-content-type-options", b"nosniff"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value).decode("latin-1")
    return None


def cookie_value(header: str | None, name: str = COOKIE) -> str:
    """The value of cookie `name` in a Cookie header ("" when absent)."""
    for part in (header or "").split(";"):
        key, equals, value = part.strip().partition("=")
        if equals and key == name:
            return value.strip()
    return ""


def _wants_html(scope: Scope) -> bool:
    return "text/html" in (_header(scope, b"accept") or "") and scope.get("method") in SAFE_METHODS


async def refuse(scope: Scope, send: Send, status: int, message: str) -> None:
    """Answer with `status` and what was wrong (HTML for a browser's page load, else JSON)."""
    if _wants_html(scope):
        body = (
            "<!doctype html><meta charset=utf-8><meta name=viewport content='width=device-width'>"
            f"<title>ralph-desk companion</title><p>{_escape(message)}</p>"
        ).encode()
        kind = b"text/html; charset=utf-8"
    else:
        body = json.dumps({"error": message}).encode()
        kind = b"application/json"
    headers = [(b"content-type", kind), (b"content-length", str(len(body)).encode()), *SECURITY_HEADERS]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class _Disconnected(Exception):
    """The client went away while its body was read."""


async def _whole_body(receive: Receive) -> bytes | None:
    """A request's body, or None once it passes BODY_LIMIT (nothing more is read then)."""
    body = b""
    more = True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Disconnected()
        body += message.get("body", b"")
        more = message.get("more_body", False)
        if len(body) > BODY_LIMIT:
            return None
    return body


class CompanionGate:
    """ASGI middleware in front of the companion app; `identify` finds the device a token names."""

    def __init__(
        self, app: ASGIApp, authorities: frozenset[str], identify: Identify, cookie: str = COOKIE
    ) -> None:
        self.app = app
        self.authorities = authorities
        self.identify = identify
        self.cookie = cookie

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # a websocket: this app has none, and the gate checks none
            return
        problem = self._problem(scope)
        if problem:
            await refuse(scope, send, *problem)
            return
        device: Device | None = None
        path = scope.get("path", "")
        if path not in OPEN_PATHS and not path.startswith(OPEN_PREFIXES):
            token = cookie_value(_header(scope, b"cookie"), self.cookie)
            device = await self.identify(token) if token else None
            if device is None:
                await refuse(
                    scope, send, 401, "Not paired: open the pairing link the desk shows (File › Companion…)."
                )
                return
        scope.setdefault("state", {})["device"] = device
        await self._serve(scope, receive, send)

    def _problem(self, scope: Scope) -> tuple[int, str] | None:
        """Why a request is refused before any route sees it (None: it may go on)."""
        host = _header(scope, b"host") or ""
        if host not in self.authorities:
            return 421, f"wrong Host header; allowed: {', '.join(sorted(self.authorities))}"
        method = scope.get("method", "")
        if method not in ALLOWED_METHODS:
            return 405, f"method {method} is not allowed; allowed: GET, POST"
        if method in SAFE_METHODS:
            return None
        if _header(scope, b"origin") != f"https://{host}":  # the page's own origin, as it was reached
            return 403, f"a request from another origin is refused; allowed: https://{host}"
        if (_header(scope, b"sec-fetch-site") or "same-origin") != "same-origin":
            return 403, "a cross-site request is refused"
        length = _header(scope, b"content-length")
        if length is not None and (not length.isdigit() or int(length) > BODY_LIMIT):
            return 413, TOO_LARGE
        return None

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Read a body whole first (refused past BODY_LIMIT), then hand it on; add the headers."""
        body = b""
        if scope.get("method") not in SAFE_METHODS:
            try:
                with anyio.fail_after(BODY_DEADLINE_S):
                    read = await _whole_body(receive)
            except TimeoutError:
                await refuse(scope, send, 408, f"the body took over {BODY_DEADLINE_S:g} s to arrive")
                return
            except _Disconnected:
                return
            if read is None:
                await refuse(scope, send, 413, TOO_LARGE)
                return
            body = read
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        async def guarded(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, replay, guarded)
