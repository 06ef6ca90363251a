"""Serving an ASGI app with uvicorn as a task in the running asyncio loop (the MCP server, the companion)."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import itertools
import socket
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_DEADLINE_S = 10.0
"""A request's headers must be in this long after its connection opened (or its last answer went out)."""
MOST_CONNECTIONS = 256
"""Connections past this many are closed as they open: a client cannot hold the process's open files."""


class GuardedH11(H11Protocol):
    """uvicorn's h11 protocol with the two limits it lacks: slow headers and too many connections.

    uvicorn starts no timer before a connection's first answer, so a client that never finishes its
    headers held its connection (and a file descriptor) for ever; a few hundred such ended the desk."""

    header_deadline_s = HEADER_DEADLINE_S
    most_connections = MOST_CONNECTIONS

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._deadline: asyncio.TimerHandle | None = None
        self._armed_for: object = None
        if len(self.connections) > self.most_connections:
            transport.close()
            return
        self._arm()

    def _arm(self) -> None:
        self._disarm()
        self._armed_for = self.cycle
        self._deadline = self.loop.call_later(self.header_deadline_s, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.cycle is not self._armed_for:  # a new request's headers are in
            self._disarm()

    def on_response_complete(self) -> None:
        answered = self.cycle
        super().on_response_complete()
        if self.cycle is answered and not self.transport.is_closing():
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _too_slow(self) -> None:
        self._deadline = None
        if self.cycle is self._armed_for:
            self.transport.close()


class _QuietUvicorn(uvicorn.Server):
    """uvicorn that leaves the process's signal handlers (the window's, the CLI's) alone."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on exactly `host` (OSError when taken), not inherited by children."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP matters: asyncio sets TCP_NODELAY only then; without it each call stalls ~40 ms.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(False)
    return sock


def own_addresses() -> frozenset[str]:
    """This machine's own names and addresses: its host name and every address of its interfaces."""
    found = {socket.gethostname().lower(), socket.getfqdn().lower()}
    for name in list(found):
        try:
            found.update(str(info[4][0]) for info in socket.getaddrinfo(name, None))
        except OSError:
            continue
    found.update(interface_addresses())
    return frozenset(address for address in found if address)


def interface_addresses() -> Iterable[str]:
    """The local IPv4 and IPv6 addresses the Linux kernel lists (none elsewhere)."""
    try:
        lines = Path("/proc/net/fib_trie").read_text().splitlines()
    except OSError:
        lines = []
    for previous, line in itertools.pairwise(lines):
        if line.strip() == "/32 host LOCAL":
            yield previous.split()[-1]
    try:
        rows = Path("/proc/net/if_inet6").read_text().splitlines()
    except OSError:
        rows = []
    for row in rows:
        packed = row.split()[0] if row.split() else ""
        if len(packed) == 32:
            yield str(ipaddress.IPv6Address(bytes.fromhex(packed)))


def shown_host(host: str) -> str:
    """A host as it goes into a URL or a Host header (an IPv6 address in brackets)."""
    return f"[{host}]" if ":" in host else host


@dataclass(frozen=True)
class Tls:
    """The certificate and key files HTTPS serves with."""

    cert_file: Path
    key_file: Path


class Serving:
    """One uvicorn server on one bound socket, running as a task until stopped."""

    def __init__(self, server: uvicorn.Server, task: asyncio.Task[None]) -> None:
        self.server = server
        self.task = task

    @classmethod
    async def start(
        cls,
        app: Any,
        sock: socket.socket,
        name: str,
        tls: Tls | None = None,
        protocol: type[GuardedH11] = GuardedH11,
    ) -> Serving:
        """Serve `app` on `sock`; returns once it accepts connections (raises if it exits first)."""
        options: dict[str, Any] = {}
        if tls is not None:
            options = {"ssl_certfile": str(tls.cert_file), "ssl_keyfile": str(tls.key_file)}
        config = uvicorn.Config(
            app,
            log_level="warning",
            lifespan="on",
            access_log=False,
            timeout_graceful_shutdown=2,
            server_header=False,
            http=protocol,
            **options,
        )
        server = _QuietUvicorn(config)
        task = asyncio.create_task(server.serve(sockets=[sock]), name=name)
        started = asyncio.Event()
        while not server.started:
            if task.done():
                task.result()
                raise RuntimeError(f"{name} exited while starting")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(started.wait(), timeout=0.01)
        return cls(server, task)

    @property
    def running(self) -> bool:
        """Whether it still serves."""
        return not self.task.done()

    async def stop(self, timeout_s: float = 10) -> None:
        """Stop accepting, finish what is in flight (briefly), and end the task."""
        self.server.should_exit = True
        await asyncio.wait_for(self.task, timeout=timeout_s)
