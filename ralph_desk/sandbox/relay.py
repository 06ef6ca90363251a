"""The desk's MCP server reached from a sandbox without a network, through one Unix socket.

A confined agent without a network has a loopback of its own: 127.0.0.1 inside is not the desk's.
Outside, `relayed` listens on a Unix socket (in a short private folder bound into the sandbox) and
connects each caller to the MCP server's TCP port. Inside, `python -m ralph_desk.sandbox.relay SOCKET
PORT -- COMMAND…` listens on 127.0.0.1:PORT, passes each connection to the socket, runs the command and
ends with its exit code. Nothing else of the network is reachable: the socket leads to the server only.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit

CHUNK = 64 * 1024
INNER_FOLDER = Path("/tmp/.ralph-desk-mcp")  # where the socket's folder appears inside the sandbox
SOCKET_NAME = "mcp.sock"


@contextlib.asynccontextmanager
async def relayed(socket_path: Path, url: str) -> AsyncIterator[None]:
    """While inside, connections to `socket_path` reach the HTTP server at `url`."""
    parsed = urlsplit(url)
    host, port = parsed.hostname or "127.0.0.1", parsed.port or 80
    bridges: set[asyncio.Task[None]] = set()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        bridges.add(task)
        try:
            up_reader, up_writer = await asyncio.open_connection(host, port)
        except OSError:
            writer.close()
            return
        try:
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            bridges.discard(task)

    # Bubblewrap's sandboxes only (Linux): Windows has neither it nor Unix sockets in asyncio.
    server = await asyncio.start_unix_server(handle, path=str(socket_path))  # type: ignore[attr-defined,unused-ignore]
    try:
        yield
    finally:
        server.close()
        for bridge in list(bridges):
            bridge.cancel()
        await asyncio.gather(*bridges, return_exceptions=True)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(CHUNK):
            writer.write(chunk)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


def inner_command(socket_path: Path, url: str, argv: list[str]) -> list[str]:
    """`argv` run behind the inner relay, which serves the MCP server's port on the sandbox's loopback."""
    port = urlsplit(url).port or 80
    return [sys.executable, "-m", "ralph_desk.sandbox.relay", str(socket_path), str(port), "--", *argv]


def _copy(source: socket.socket, target: socket.socket) -> None:
    try:
        while chunk := source.recv(CHUNK):
            target.sendall(chunk)
        target.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def _bridge(connection: socket.socket, socket_path: str) -> None:
    if sys.platform == "win32":
        return
    with connection, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as upstream:
        try:
            upstream.connect(socket_path)
        except OSError:
            return
        back = threading.Thread(target=_copy, args=(upstream, connection), daemon=True)
        back.start()
        _copy(connection, upstream)
        back.join()


def _serve(listener: socket.socket, socket_path: str) -> None:
    while True:
        connection, _ = listener.accept()
        threading.Thread(target=_bridge, args=(connection, socket_path), daemon=True).start()


def main(argv: list[str]) -> int:
    """The inner relay: serve the port, run the command, end with its exit code."""
    socket_path, port, separator, *command = argv
    if separator != "--" or not command:
        print("usage: python -m ralph_desk.sandbox.relay SOCKET PORT -- COMMAND…", file=sys.stderr)
        return 2
    if sys.platform == "win32":
        return 2
    listener = socket.create_server(("127.0.0.1", int(port)))
    threading.Thread(target=_serve, args=(listener, socket_path), daemon=True).start()
    child = subprocess.Popen(command)
    for stop in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(stop, lambda number, _frame: child.send_signal(number))
    return child.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
