"""What every route of the companion app works with: the services, pairing, the loop switch, templates."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.templating import Jinja2Templates

from ralph_desk import resource_dir
from ralph_desk.companion.live import ChangeStream
from ralph_desk.companion.lockout import PairingLockout
from ralph_desk.companion.notices import Notices
from ralph_desk.companion.switch import LoopSwitch
from ralph_desk.domain.records import Device
from ralph_desk.services.companion import CompanionService
from ralph_desk.services.container import Services

DEVICE_SUFFIX = " (companion)"
LIVE_HEADER = "x-companion-live"
"""Sent by the page's live update: it reads the page again, leaving a decision's notice to its answer."""


def templates() -> Jinja2Templates:
    """The page templates (autoescaped), from `resources/companion/templates`."""
    return Jinja2Templates(directory=resource_dir() / "companion" / "templates")


@dataclass
class CompanionContext:
    """One served project's companion: its services, pairing, the loop switch (None: no loop here)."""

    services: Services
    companion: CompanionService
    switch: LoopSwitch | None
    lockout: PairingLockout
    changes: ChangeStream
    pages: Jinja2Templates
    cookie: str
    project_title: str = ""
    notices: Notices = field(default_factory=Notices)

    async def call(self, function: Any, *args: Any) -> Any:
        """Run a service call off the event loop (in the window the loop is the GUI thread)."""
        return await anyio.to_thread.run_sync(function, *args)

    def render(self, request: Request, template: str, status: int = 200, **values: Any) -> HTMLResponse:
        """A page from its template, with the device and project every page shows."""
        device: Device | None = request.state.device
        values.setdefault("device", device)
        values.setdefault(
            "project_title", self.project_title if device is not None else ""
        )  # not to strangers
        if device is not None and "notice" not in values and LIVE_HEADER not in request.headers:
            values["notice"] = self.notices.take(device.id)
        return self.pages.TemplateResponse(request, template, values, status_code=status)

    @staticmethod
    def maker(request: Request) -> str:
        """How a decision from this request is recorded: the device's name, marked as the companion's."""
        device: Device = request.state.device
        return f"{device.name}{DEVICE_SUFFIX}"
