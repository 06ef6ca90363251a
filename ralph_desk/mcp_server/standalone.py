"""`ralph-desk mcp`: the server as its own process, over stdio or HTTP, logging to stderr and .ralph/logs."""

from __future__ import annotations

import asyncio
import logging
import secrets
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import anyio

from ralph_desk.domain.session import SessionContext
from ralph_desk.mcp_server import collection
from ralph_desk.mcp_server.calllog import open_log, stamped
from ralph_desk.project import ProjectPaths
from ralph_desk.project.logs import remember_log_file
from ralph_desk.services.opening import ServicesOnFirstUse

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from ralph_desk.mcp_server.binding import LoopControl
    from ralph_desk.mcp_server.server import Middleware

log = logging.getLogger("ralph_desk.mcp")


class LogFile(logging.StreamHandler[TextIO]):
    """A log file (not a console: a later setup still adds stderr), owner-only inside the project."""


def setup_logging(
    paths: ProjectPaths, name: str, level: int = logging.INFO, log_dir: Path | None = None
) -> Path:
    """Log to stderr and to `YYYYMMDD-HHMMSS_<name>.log` in `log_dir` (default: `.ralph/logs`).

    stdout stays for the protocol. The project's own folder is written without following links; a
    `log_dir` the person named is theirs to choose.
    """
    log_file = stamped(log_dir or paths.logs_dir, name, ".log")
    formatter = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    root = logging.getLogger()
    root.setLevel(level)
    logging.getLogger("alembic").setLevel(logging.WARNING)
    handlers: list[logging.Handler] = [LogFile(open_log(paths.root, log_file))]
    consoles = [h for h in root.handlers if type(h) is logging.StreamHandler]
    if not consoles:
        handlers.append(logging.StreamHandler(sys.stderr))
    for handler in handlers:
        handler.setFormatter(formatter)
        root.addHandler(handler)
    remember_log_file(paths.logs_dir, log_file)
    return log_file


def serve_stdio(
    services: ServicesOnFirstUse,
    context: SessionContext,
    loop: LoopControl | None = None,
    call_log: Path | None = None,
    log_dir: Path | None = None,
) -> Exception | None:
    """Serve one client over stdin/stdout until it disconnects; the error of a store that failed to open.

    The handshake and the listings are answered before the database is open (`staged`). On a folder
    with no `.ralph/` yet, only ralph_init and ralph_validate are served until ralph_init has run
    (`bootstrap`); from then on the process logs into the new `.ralph/logs/` (or `log_dir`).
    """
    from ralph_desk.mcp_server.server import fixed_context, make_server
    from ralph_desk.mcp_server.staged import OpenStoreBehind

    paths = services.paths
    server = make_server(
        services,
        paths,
        fixed_context(context),
        loop,
        only=context.enabled_tools,
        middleware=[_until_initialised(paths, call_log, log_dir), OpenStoreBehind(services)],
        call_log=call_log,
    )
    log.info("serving %s over stdio (recipe %s, task %s)", paths.root, context.recipe.value, context.task_id)
    anyio.run(_serve_stdio, server, loop)
    return services.failure


def _until_initialised(paths: ProjectPaths, call_log: Path | None, log_dir: Path | None) -> Middleware:
    """The bootstrap gate; once ralph_init has made the project, this process logs into it (if not yet)."""
    from ralph_desk.mcp_server.bootstrap import UntilInitialised

    def log_there() -> None:
        if call_log is None:
            setup_logging(paths, "mcp", log_dir=log_dir)

    return UntilInitialised(paths, on_initialised=log_there)


async def _serve_stdio(server: MCPServer, loop: LoopControl | None) -> None:
    """Serve until the client goes, then end the loop it started as the project's setting says.

    A stop signal (the client's SIGTERM once it stops waiting) ends that loop's agent at once, so that
    no agent outlives the server and no task stays in progress.
    """
    from ralph_desk.mcp_server.stdio_guard import serve_guarded

    async with anyio.create_task_group() as group:
        if loop is not None and sys.platform != "win32":
            group.start_soon(_end_loop_on_signal, loop, group.cancel_scope)
        await serve_guarded(server)
        if loop is not None:
            await loop.client_gone()
        group.cancel_scope.cancel()


async def _end_loop_on_signal(loop: LoopControl, scope: anyio.CancelScope) -> None:
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for signum in signals:
            log.info("signal %s: ending the loop this server runs, then stopping", signum)
            await loop.client_gone(now=True)
            scope.cancel()
            return


def serve_http(
    services: ServicesOnFirstUse,
    context: SessionContext,
    host: str,
    port: int,
    token: str | None,
    loop: LoopControl | None = None,
    call_log: Path | None = None,
    log_dir: Path | None = None,
) -> None:
    """Serve over Streamable HTTP until SIGINT/SIGTERM; prints the endpoint and token to stderr."""
    # Here, not at the top: a stdio server has no use for the HTTP stack.
    from ralph_desk.mcp_server.auth import SessionTokens
    from ralph_desk.mcp_server.hosting import HttpHost
    from ralph_desk.mcp_server.origins import LOOPBACK_NAMES, accepted_names
    from ralph_desk.mcp_server.server import context_from_request, make_server

    if host not in LOOPBACK_NAMES:
        log.warning(
            "binding to %s: the server is reachable from other machines (exposed); every request still needs "
            "the token and a Host naming one of: %s",
            host,
            ", ".join(sorted(accepted_names(host))),
        )
    tokens = SessionTokens()
    chosen = token or secrets.token_urlsafe(32)
    tokens.register(chosen, context)
    paths = services.paths
    server = make_server(
        services,
        paths,
        lambda request: context_from_request(request, context),
        loop,
        only=context.enabled_tools,
        middleware=[_until_initialised(paths, call_log, log_dir)],
        call_log=call_log,
    )
    http = HttpHost(server, tokens, host=host, port=port)

    async def main() -> None:
        await http.start()
        print(f"ralph MCP server: {http.url}", file=sys.stderr, flush=True)
        if token is None:
            print(f"bearer token: {chosen}", file=sys.stderr, flush=True)
        stop = asyncio.Event()
        running = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            running.add_signal_handler(signum, stop.set)
        await stop.wait()
        if loop is not None:
            await loop.client_gone(now=True)  # no agent outlives the server
        await http.stop()

    collection.resume()
    asyncio.run(main())
