"""Serving the companion app over HTTPS on the one address the person chose, in the running asyncio loop."""

from __future__ import annotations

import logging

import anyio.to_thread

from ralph_desk.companion.app import build_app
from ralph_desk.companion.context import CompanionContext, templates
from ralph_desk.companion.gate import COOKIE, CompanionGate
from ralph_desk.companion.live import ChangeStream
from ralph_desk.companion.lockout import PairingLockout
from ralph_desk.companion.switch import LoopSwitch
from ralph_desk.domain.records import Device
from ralph_desk.http_serving import Serving, Tls, bind, shown_host
from ralph_desk.project.companion_home import Certificate, CompanionHome, CompanionSettings
from ralph_desk.project.errors import ProjectError
from ralph_desk.services.companion import PairingCode
from ralph_desk.services.container import Services

log = logging.getLogger("ralph_desk.companion")


class CompanionHost:
    """The companion page of one project, served until stopped; `switch` is this process's loop, if any."""

    def __init__(
        self,
        services: Services,
        home: CompanionHome,
        settings: CompanionSettings,
        switch: LoopSwitch | None = None,
        project_title: str = "",
    ) -> None:
        self.services = services
        self.home = home
        self.host = settings.host
        self.port = settings.port
        self.switch = switch
        self.project_title = project_title
        self.companion = services.companion(home.secret())
        self.lockout = PairingLockout()
        self.certificate: Certificate | None = None
        self._settings = settings
        self._serving: Serving | None = None
        self._changes: ChangeStream | None = None

    @property
    def authority(self) -> str:
        """`host:port` as the Host header must name it."""
        return f"{shown_host(self.host)}:{self.port}"

    @property
    def url(self) -> str:
        """The page's address."""
        return f"https://{self.authority}/"

    @property
    def fingerprint(self) -> str:
        """The certificate's SHA-256 fingerprint, for the person to compare on the phone."""
        return self.certificate.fingerprint if self.certificate is not None else ""

    @property
    def running(self) -> bool:
        """Whether the page is being served."""
        return self._serving is not None and self._serving.running

    def pairing_link(self, code: PairingCode) -> str:
        """The link the QR code holds: the code rides in the fragment, which no server or log sees."""
        return f"{self.url}pair#{code.code}"

    def new_code(self) -> PairingCode:
        """A fresh one-time code (a database write: call it off the GUI thread); it also lifts a lockout."""
        self.lockout.reset()
        return self.companion.issue_code()

    async def _identify(self, token: str) -> Device | None:
        device: Device | None = await anyio.to_thread.run_sync(self.companion.device_for, token)
        return device

    async def start(self) -> None:
        """Make or load the certificate, bind the address (OSError when taken) and serve."""
        problem = self._settings.problem()
        if problem:
            raise ProjectError(f"companion: {problem}")
        self.certificate = await anyio.to_thread.run_sync(self.home.certificate, self.host)
        sock = bind(self.host, self.port)
        self.port = sock.getsockname()[1]
        self._changes = ChangeStream(self.services.db)
        context = CompanionContext(
            services=self.services,
            companion=self.companion,
            switch=self.switch,
            lockout=self.lockout,
            changes=self._changes,
            pages=templates(),
            cookie=f"{COOKIE}_{self.port}",  # cookies ignore ports: two projects' pages must not share one
            project_title=self.project_title,
        )
        gated = CompanionGate(
            build_app(context), self.authority, self.url.rstrip("/"), self._identify, context.cookie
        )
        tls = Tls(self.certificate.cert_file, self.certificate.key_file)
        try:
            self._serving = await Serving.start(gated, sock, "ralph-companion", tls)
        except BaseException:
            sock.close()
            raise
        if self._settings.all_interfaces:
            log.warning(
                "the companion page listens on every interface (%s): any network can reach it", self.host
            )
        log.info("companion page at %s (certificate %s)", self.url, self.fingerprint)

    async def stop(self) -> None:
        """End open pages' streams, then stop serving."""
        if self._changes is not None:
            await self._changes.close()
            self._changes = None
        if self._serving is not None:
            await self._serving.stop()
            self._serving = None
            log.info("companion page stopped")
