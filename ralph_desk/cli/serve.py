"""Commands that serve or describe the MCP server: `mcp` and `connect`."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ralph_desk.cli.command import Command

if TYPE_CHECKING:
    from ralph_desk.loop.control import LoopController
    from ralph_desk.services.opening import ServicesOnFirstUse


def _configure_mcp(parser: argparse.ArgumentParser) -> None:
    from ralph_desk.mcp_server.commands import configure_mcp

    configure_mcp(parser)


def _run_mcp(args: argparse.Namespace) -> int:
    from ralph_desk.mcp_server.commands import run_mcp
    from ralph_desk.mcp_server.deferred_loop import DeferredLoopControl

    return run_mcp(args, lambda services: DeferredLoopControl(lambda: _loop_controller(services)))


def _loop_controller(services: ServicesOnFirstUse) -> LoopController:
    """The loop behind a standalone server's loop-control tools, with an embedded server for its agents."""
    from ralph_desk.loop.control import LoopController
    from ralph_desk.mcp_server.embedded import EmbeddedMcp

    control = LoopController(services)
    hosts: list[EmbeddedMcp] = []

    async def issuer() -> EmbeddedMcp:
        if not hosts:
            host = EmbeddedMcp(services(), loop=control)
            await host.start()
            hosts.append(host)
        return hosts[0]

    async def release() -> None:
        for host in hosts:
            await host.stop()
        hosts.clear()

    control.make_issuer = issuer
    control.release = release
    return control


def _configure_connect(parser: argparse.ArgumentParser) -> None:
    from ralph_desk.mcp_server.commands import configure_connect

    configure_connect(parser)


def _run_connect(args: argparse.Namespace) -> int:
    from ralph_desk.mcp_server.commands import run_connect

    return run_connect(args)


MCP = Command("mcp", "serve the project's MCP tools over stdio or HTTP", _configure_mcp, _run_mcp)
CONNECT = Command(
    "connect", "write and print a ready MCP config for a client", _configure_connect, _run_connect
)
