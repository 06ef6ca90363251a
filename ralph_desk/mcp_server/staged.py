"""A stdio server that answers before it has opened the store, and opens it while the client talks.

SQLAlchemy with the store takes ~0.3 s to import and open on a 2-core machine, yet the handshake
and the listings need neither. So the store opens in a worker thread from the first message after
`initialize` (after its answer has gone out), and only the requests that read the project wait for
it; a store that cannot be opened answers each of them with the reason.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR

from ralph_desk.mcp_server import collection
from ralph_desk.services.opening import ServicesOnFirstUse
from ralph_desk.store.errors import in_words

log = logging.getLogger("ralph_desk.mcp")

# What a client can be answered without the project's database.
WITHOUT_STORE = frozenset(
    {
        "initialize",
        "ping",
        "tools/list",
        "resources/list",
        "resources/templates/list",
        "prompts/list",
        "prompts/get",
    }
)


class OpenStoreBehind:
    """Middleware: opens the store once the handshake is answered; requests reading the project wait."""

    def __init__(self, services: ServicesOnFirstUse) -> None:
        self.services = services
        self._opening: threading.Thread | None = None
        self._opened = False  # once a request has seen the store open, none waits on a thread again

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if self._opened:
            return await call_next(ctx)
        if self._opening is None and not self.services.paths.ralph.is_dir():
            # No project yet: opening would create a database in a folder ralph_init has not made.
            collection.resume()
            return await call_next(ctx)
        # Not on `initialize` itself, so that the worker does not slow down the handshake's answer.
        if ctx.method != "initialize" and self._opening is None:
            self._opening = threading.Thread(target=self._open, name="open the store", daemon=True)
            self._opening.start()
        if ctx.method not in WITHOUT_STORE and ctx.request_id is not None:
            try:
                await anyio.to_thread.run_sync(self.services)
                self._opened = True
            except Exception as error:  # told to every request that needs the store
                message = f"opening the project's database failed: {in_words(error)}"  # one line, no SQL
                raise MCPError(INTERNAL_ERROR, message) from None
            finally:
                collection.resume()  # the opening thread may not have reached its own resume yet
        return await call_next(ctx)

    def _open(self) -> None:
        try:
            self.services()
        except Exception:  # kept by `services`: each request needing the store is told why
            log.exception("opening the project's database failed")
        finally:
            collection.resume()  # start-up ends with the store open
