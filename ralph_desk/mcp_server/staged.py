"""A stdio server that answers the handshake before it has loaded its tools and opened the store.

Any Python MCP server pays the SDK's import before its first answer (~0.6 s on a 2-core machine).
ralph's tool table adds ~65 ms to that and SQLAlchemy with the store ~300 ms, yet a client waiting
for its `initialize` answer needs neither. So the server answers `initialize` and `ping` as soon as
the SDK is in; once the client has that answer, a worker thread builds the tool table, then opens
the store. Listings (tools, resources, prompts) wait for the tool table, everything else for the
store too, and a part that could not be loaded answers every request needing it with the reason.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar, cast

import anyio
from anyio.abc import TaskGroup
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool, ToolManager
from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR

from ralph_desk.mcp_server.identity import server_options

log = logging.getLogger("ralph_desk.mcp")

ANSWERED_AT_ONCE = frozenset({"initialize", "ping"})
NEEDS_TOOLS_ONLY = frozenset(
    {"tools/list", "resources/list", "resources/templates/list", "prompts/list", "prompts/get"}
)

T = TypeVar("T")
Middleware = ServerMiddleware[Any]


class StagedServer(MCPServer):
    """An `MCPServer` whose tool table is installed after it has begun to serve."""

    def install_tools(self, tools: Sequence[Tool]) -> None:
        """Serve exactly these tools from now on."""
        # The SDK takes prepared tools only at construction (`add_tool` derives each one's schema
        # from a function signature again, ~3 ms a tool), so a table built later is swapped in whole.
        self._tool_manager = ToolManager(tools=list(tools))


class Stage(Generic[T]):
    """One part of the start, made once in a worker thread; the requests that need it wait for it."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.error: Exception | None = None
        self._made = anyio.Event()
        self._value: T | None = None

    async def make(self, build: Callable[[], T]) -> bool:
        """Make the part; False, with the error kept, when that failed."""
        try:
            self._value = await anyio.to_thread.run_sync(build)
        except Exception as error:  # the top of a stage: every request needing it is told why
            log.exception("%s failed", self.what)
            self.error = error
        finally:
            self._made.set()
        return self.error is None

    async def ready(self) -> T:
        """The part, once made; an MCP error saying why when it could not be made."""
        await self._made.wait()
        if self.error is not None:
            raise MCPError(code=INTERNAL_ERROR, message=f"{self.what} failed: {self.error}")
        return cast(T, self._value)


class StagedStart:
    """Serves one stdio client at once and loads the rest behind its first answer.

    `load_tools` installs the tools, resources and prompts on the server and returns the
    middleware that checks each request against the session; `open_store` opens the database.
    """

    def __init__(self, load_tools: Callable[[StagedServer], Middleware], open_store: Callable[[], object]):
        self.server = StagedServer(**server_options(), middleware=[self._hold_until_loaded])
        self._load_tools = load_tools
        self._open_store = open_store
        self._tools = Stage[Middleware]("loading the tools")
        self._store = Stage[object]("opening the project's database")
        self._group: TaskGroup | None = None
        self._loading = False

    def run(self) -> Exception | None:
        """Serve until the client goes away; the error of a part that could not be loaded, if any."""
        return anyio.run(self._serve)

    async def _serve(self) -> Exception | None:
        async with anyio.create_task_group() as group:
            self._group = group
            await self.server.run_stdio_async()
            group.cancel_scope.cancel()
        return self._tools.error or self._store.error

    def _start_loading(self) -> None:
        if not self._loading:
            assert self._group is not None, "messages arrive only while _serve runs"
            self._loading = True
            self._group.start_soon(self._load)

    async def _load(self) -> None:
        if await self._tools.make(lambda: self._load_tools(self.server)):
            await self._store.make(self._open_store)

    async def _hold_until_loaded(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        # Loading starts with the first message after `initialize` (normally the client's
        # `initialized`), so that the worker thread does not slow down the handshake's answer.
        if ctx.method != "initialize":
            self._start_loading()
        if ctx.method in ANSWERED_AT_ONCE or ctx.request_id is None:
            return await call_next(ctx)
        session_gate = await self._tools.ready()
        if ctx.method not in NEEDS_TOOLS_ONLY:
            await self._store.ready()
        return await session_gate(ctx, call_next)
