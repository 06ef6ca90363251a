"""Pairing a browser: the code from the desk, a name for the device, then its cookie."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ralph_desk.companion.context import CompanionContext
from ralph_desk.services.companion import PairedDevice, PairingRefused
from ralph_desk.services.errors import InvalidValueError

COOKIE_MAX_AGE_S = 365 * 24 * 3600
FIELD_LIMIT = 200


async def _lifted(context: CompanionContext) -> bool:
    """Whether a code was made since pairing locked (here, or by `ralph-desk companion pair`): it unlocks."""
    locked_at = context.lockout.locked_at
    if locked_at is None:
        return False
    newest = await context.call(context.companion.newest_code_at)
    if newest is None or newest <= locked_at:
        return False
    context.lockout.reset()
    return True


def routes(context: CompanionContext) -> list[Route]:
    """`GET /pair` (the form) and `POST /pair` (the code and a name → the device's cookie)."""

    async def form(request: Request) -> Response:
        return context.render(request, "pair.html", name="Phone")

    async def pair(request: Request) -> Response:
        fields = await request.form(max_files=0, max_fields=4)
        code, name = str(fields.get("code", ""))[:FIELD_LIMIT], str(fields.get("name", ""))[:FIELD_LIMIT]
        client = request.client.host if request.client is not None else ""
        locked = context.lockout.attempt(client)
        if locked and await _lifted(context):
            locked = context.lockout.attempt(client)
        if locked:
            minutes = max(1, round(locked / 60))
            error = f"Pairing is locked for {minutes} min after ten wrong codes. Make a new code at the desk."
            return context.render(request, "pair.html", 429, name=name, error=error)
        try:
            paired: PairedDevice = await context.call(context.companion.pair, code, name)
        except PairingRefused as refused:  # stays counted
            return context.render(request, "pair.html", 400, name=name, error=str(refused))
        except InvalidValueError as invalid:
            context.lockout.forgive(client)
            return context.render(request, "pair.html", 400, name=name, code=code, error=str(invalid))
        context.lockout.forgive(client)
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(
            context.cookie,
            paired.token,
            max_age=COOKIE_MAX_AGE_S,
            path="/",
            secure=True,
            httponly=True,
            samesite="strict",
        )
        return response

    return [Route("/pair", form, methods=["GET"]), Route("/pair", pair, methods=["POST"])]
