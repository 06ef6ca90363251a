"""The companion app: its routes over one context; the gate in front of it is added by the host."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from ralph_desk import resource_dir
from ralph_desk.companion import actions, inbox_pages, loop_page, pairing, review_pages
from ralph_desk.companion.actions import MissingError
from ralph_desk.companion.context import CompanionContext
from ralph_desk.domain.records import Device
from ralph_desk.services.errors import NotFoundError


def build_app(context: CompanionContext) -> Starlette:
    """The routes: pairing, the pages, their decisions, the live stream and the vendored static files."""

    async def events(request: Request) -> Response:
        device: Device = request.state.device

        async def still_paired() -> bool:
            return device.id in {live.id for live in await context.call(context.companion.live_devices)}

        return StreamingResponse(
            context.changes.events(still_paired),
            media_type="text/event-stream",
            headers={"x-accel-buffering": "no"},
        )

    async def missing(request: Request, error: Exception) -> Response:
        if isinstance(error, HTTPException) and error.status_code != 404:
            return PlainTextResponse(error.detail, status_code=error.status_code)
        what = str(error) if isinstance(error, MissingError | NotFoundError) else "No such page."
        return context.render(request, "missing.html", 404, what=what)

    routes: list[BaseRoute] = [
        *pairing.routes(context),
        *inbox_pages.routes(context),
        *review_pages.routes(context),
        *loop_page.routes(context),
        *actions.routes(context),
        Route("/events", events, methods=["GET"]),
        Mount("/static", StaticFiles(directory=resource_dir() / "companion" / "static"), name="static"),
    ]
    handlers = {HTTPException: missing, MissingError: missing, NotFoundError: missing}
    return Starlette(routes=routes, exception_handlers=handlers)
