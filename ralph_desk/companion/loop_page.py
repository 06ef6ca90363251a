"""The Loop page: the state of the loop this process runs, with pause, resume and stop."""

from __future__ import annotations

from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ralph_desk.companion.context import CompanionContext
from ralph_desk.companion.switch import NO_LOOP, LoopSwitch, LoopView
from ralph_desk.services.errors import ServiceError

SAID = {"pause": "Pausing the loop", "resume": "Resuming the loop", "stop": "Stopping the loop"}


def _view(switch: LoopSwitch | None) -> LoopView:
    return switch.view() if switch is not None else NO_LOOP


def show(context: CompanionContext, request: Request, status: int = 200, error: str = "") -> Response:
    """The loop's state (the switch is called on the serving loop's thread, as it asks)."""
    return context.render(
        request,
        "loop.html",
        status,
        section="loop",
        loop=_view(context.switch),
        here=context.switch is not None,
        error=error,
    )


def routes(context: CompanionContext) -> list[Route]:
    """`GET /loop` and `POST /act/loop/{pause|resume|stop}`."""

    async def page(request: Request) -> Response:
        return show(context, request)

    async def act(request: Request) -> Response:
        action = request.path_params["action"]
        switch = context.switch
        if switch is None:
            return show(context, request, 409, "No loop runs in the process that serves this page.")
        does: dict[str, Callable[[], None]] = {
            "pause": switch.pause,
            "resume": switch.resume,
            "stop": switch.stop,
        }
        if action not in does:
            return show(context, request, 404, f"No such action {action!r}; allowed: pause, resume, stop.")
        try:
            does[action]()
        except ServiceError as refused:
            return show(context, request, 409, str(refused))
        context.notices.say(request.state.device.id, f"{SAID[action]}.")
        return RedirectResponse("/loop", status_code=303)

    return [
        Route("/loop", page, methods=["GET"]),
        Route("/act/loop/{action}", act, methods=["POST"]),
    ]
