"""A server started on a folder that is no ralph-desk project yet (DESIGN §6, seeds 003/004).

It offers `ralph_init` and `ralph_validate`; every other tool answers seed 003's `not_initialised`
and resources wait for the project. Once `ralph_init` has made `.ralph/`, the same server serves
its whole tool set, and tells the client that the list changed.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_REQUEST

from ralph_desk.domain.loop_results import NOT_INITIALISED
from ralph_desk.mcp_server.binding import StructuredToolError
from ralph_desk.mcp_server.server import error_result
from ralph_desk.project import ProjectPaths

log = logging.getLogger("ralph_desk.mcp")

BEFORE_INIT = frozenset({"ralph_init", "ralph_validate"})
NEEDS_PROJECT = frozenset({"resources/read", "resources/templates/list"})


class UntilInitialised:
    """Middleware: until the root has a `.ralph/` folder, only ralph_init and ralph_validate exist."""

    def __init__(self, paths: ProjectPaths, on_initialised: Callable[[], object] | None = None) -> None:
        self.paths = paths
        self.on_initialised = on_initialised
        self._announced = self.ready()

    def ready(self) -> bool:
        """Whether the folder is a project (it has `.ralph/`)."""
        return self.paths.ralph.is_dir()

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if self._announced:
            return await call_next(ctx)
        if ctx.method == "tools/list":
            return self._bootstrap_listing(await call_next(ctx))
        if ctx.method == "tools/call":
            name = (ctx.params or {}).get("name")
            if name not in BEFORE_INIT and not self.ready():
                return self._refusal(name)
            result = await call_next(ctx)
            if name == "ralph_init" and self.ready():
                await self._announce(ctx)
            return result
        if ctx.method in NEEDS_PROJECT and not self.ready():
            raise MCPError(INVALID_REQUEST, f"{NOT_INITIALISED} ({self.paths.root})")
        return await call_next(ctx)

    def _bootstrap_listing(self, result: HandlerResult) -> HandlerResult:
        if self.ready() or not isinstance(result, dict):
            return result
        return {
            **result,
            "tools": [tool for tool in result.get("tools") or [] if tool.get("name") in BEFORE_INIT],
        }

    def _refusal(self, name: object) -> dict[str, Any]:
        error = StructuredToolError(
            "not_initialised", NOT_INITIALISED, {"tool": name, "root": str(self.paths.root)}
        )
        return error_result(str(error))

    async def _announce(self, ctx: ServerRequestContext[Any, Any]) -> None:
        """The project exists now: log into it, and tell the client its tool list changed."""
        self._announced = True
        log.info("%s is a ralph-desk project now: serving every tool", self.paths.root)
        if self.on_initialised is not None:
            self.on_initialised()
        # A client that does not follow list changes lists again when it needs to; nothing is lost.
        with contextlib.suppress(Exception):
            await ctx.session.send_tool_list_changed()
