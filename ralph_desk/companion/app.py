"""The companion app: its routes over one context; the gate in front of it is added by the host."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from ralph_desk import resource_dir
from ralph_desk.companion import pairing
from ralph_desk.companion.context import CompanionContext
from ralph_desk.domain.records import Device


def build_app(context: CompanionContext) -> Starlette:
    """The routes: pairing, the pages, the live stream and the vendored static files."""

    async def inbox(request: Request) -> Response:
        counts = await context.call(context.services.inbox.counts)
        return context.render(request, "inbox.html", counts=counts)

    async def events(request: Request) -> Response:
        device: Device = request.state.device

        async def still_paired() -> bool:
            return device.id in {live.id for live in await context.call(context.companion.live_devices)}

        return StreamingResponse(
            context.changes.events(still_paired),
            media_type="text/event-stream",
            headers={"x-accel-buffering": "no"},
        )

    routes: list[BaseRoute] = [
        *pairing.routes(context),
        Route("/", inbox, methods=["GET"]),
        Route("/events", events, methods=["GET"]),
        Mount("/static", StaticFiles(directory=resource_dir() / "companion" / "static"), name="static"),
    ]
    return Starlette(routes=routes)
