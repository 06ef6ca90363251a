"""The one uvicorn runner refuses what uvicorn alone lets a client hold: slow headers, many connections."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from ralph_desk.http_serving import GuardedH11, Serving, bind

WAIT_S = 20.0


async def hello(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"hi"})


class Strict(GuardedH11):
    header_deadline_s = 0.5
    most_connections = 3


@pytest.fixture
def port() -> Iterator[int]:
    """A server of `hello` with a half-second header deadline and three connections at most."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    sock = bind("127.0.0.1", 0)
    serving = asyncio.run_coroutine_threadsafe(
        Serving.start(hello, sock, "test", protocol=Strict), loop
    ).result(30)
    try:
        yield sock.getsockname()[1]
    finally:
        asyncio.run_coroutine_threadsafe(serving.stop(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def _connect(port: int) -> socket.socket:
    client = socket.create_connection(("127.0.0.1", port), timeout=WAIT_S)
    return client


def _closed(client: socket.socket) -> bool:
    """Whether the server closed the connection (read until it does, or until WAIT_S)."""
    try:
        while data := client.recv(4096):
            if b"HTTP/1.1 200" in data:
                return False
    except ConnectionResetError:  # closed with the request unread
        return True
    except TimeoutError:
        return False
    return True


def _answered(client: socket.socket) -> bool:
    """Whether the server answered `hi` (read until it has, or closed)."""
    seen = b""
    while b"hi" not in seen and (data := client.recv(4096)):
        seen += data
    return seen.startswith(b"HTTP/1.1 200") and seen.endswith(b"hi")


def test_a_client_that_never_finishes_its_headers_is_cut_off(port: int) -> None:
    with _connect(port) as slow:
        slow.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-a: b")
        assert _closed(slow)
    with _connect(port) as prompt:  # a whole request is answered, and its connection kept a moment
        prompt.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert _answered(prompt)


def test_connections_past_the_limit_are_closed_as_they_open(port: int) -> None:
    held = [_connect(port) for _ in range(3)]
    try:
        for client in held:
            client.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")  # each answered: it counts as open
            assert _answered(client)
        with _connect(port) as extra:
            extra.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            assert _closed(extra)
    finally:
        for client in held:
            client.close()
