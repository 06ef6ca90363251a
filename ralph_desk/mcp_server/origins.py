"""Which Host and Origin headers the HTTP server accepts (DNS-rebinding protection), each matched exactly.

A name matches as a whole (`localhost`, never `localhost.evil.example`), a port is digits or absent
(a Host without one means port 80), and an Origin is `http://name[:port]` with nothing more.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from ralph_desk.http_serving import own_addresses
from ralph_desk.mcp_server.auth import ASGIApp, Receive, Scope, Send

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
EVERY_INTERFACE = frozenset({"0.0.0.0", "::"})


def accepted_names(bind: str) -> frozenset[str]:
    """The host names a client may use for a server bound to `bind`."""
    if bind in EVERY_INTERFACE:
        return LOOPBACK_NAMES | own_addresses()
    return LOOPBACK_NAMES | {bind.lower()}


def _name_and_port(authority: str) -> tuple[str, str | None] | None:
    """`[::1]:80` as (`::1`, `80`), `localhost` as (`localhost`, None); None when malformed."""
    if authority.startswith("["):
        name, bracket, rest = authority[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            return None
        port = rest[1:] if rest else None
    else:
        name, colon, port_text = authority.partition(":")
        port = port_text if colon else None
    if port is not None and not (port.isascii() and port.isdigit() and len(port) <= 5):
        return None
    return name.lower(), port


def host_allowed(host: str | None, names: frozenset[str]) -> bool:
    """Whether a Host header names this server: an accepted name, with a port of digits or none."""
    parsed = _name_and_port(host or "")
    return parsed is not None and parsed[0] in names


def origin_allowed(origin: str | None, names: frozenset[str]) -> bool:
    """Whether an Origin header (absent for same-origin requests) is `http://` an accepted name."""
    if origin is None:
        return True
    scheme, _, authority = origin.partition("://")
    if scheme.lower() != "http" or any(mark in authority for mark in "/?#@"):
        return False
    try:
        urlsplit(origin).port  # noqa: B018 - it raises on a port that is not a number in range
    except ValueError:
        return False
    parsed = _name_and_port(authority)
    return parsed is not None and parsed[0] in names


class HeaderGate:
    """ASGI middleware: 421 for a Host, 403 for an Origin that does not name this server."""

    def __init__(self, app: ASGIApp, names: frozenset[str]) -> None:
        self.app = app
        self.names = names

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = scope.get("headers", [])
        headers = {bytes(key).lower(): bytes(value).decode("latin-1") for key, value in given}
        shown = ", ".join(sorted(self.names))
        if not host_allowed(headers.get(b"host"), self.names):
            await _refuse(send, 421, f"Invalid Host header: allowed: one of {shown}, with a port or none")
        elif not origin_allowed(headers.get(b"origin"), self.names):
            allowed = f"http:// and one of {shown}, with a port or none"
            await _refuse(send, 403, f"Invalid Origin header: allowed: {allowed}")
        else:
            await self.app(scope, receive, send)


async def _refuse(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": "forbidden_header", "message": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
