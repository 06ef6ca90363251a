"""Serving the companion app over HTTPS on the one address the person chose, in the running asyncio loop."""

from __future__ import annotations

import ipaddress
import logging

import anyio.to_thread

from ralph_desk.companion.app import build_app
from ralph_desk.companion.context import CompanionContext, templates
from ralph_desk.companion.gate import COOKIE, CompanionGate
from ralph_desk.companion.live import ChangeStream
from ralph_desk.companion.lockout import PairingLockout
from ralph_desk.companion.switch import LoopSwitch
from ralph_desk.domain.records import Device
from ralph_desk.http_serving import Serving, Tls, bind, own_addresses, shown_host
from ralph_desk.project.companion_addresses import choosable_addresses
from ralph_desk.project.companion_home import LOOPBACK, Certificate, CompanionHome, CompanionSettings
from ralph_desk.project.errors import ProjectError
from ralph_desk.services.companion import PairingCode
from ralph_desk.services.container import Services

log = logging.getLogger("ralph_desk.companion")


def _is_loopback(name: str) -> bool:
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def served_names(settings: CompanionSettings) -> list[str]:
    """The addresses and names the page answers on (every one of this computer's on 0.0.0.0 or ::)."""
    return sorted(own_addresses()) if settings.all_interfaces else [settings.host]


def link_authority(settings: CompanionSettings, port: int | None = None) -> str:
    """`host:port` as links name the page (on every interface: the first LAN address, else loopback)."""
    host = settings.host
    if settings.all_interfaces:
        offered = choosable_addresses()[1:]  # after 127.0.0.1: this computer's IPv4, then IPv6 addresses
        host = next((address for address in offered if ":" not in address), LOOPBACK)
    return f"{shown_host(host)}:{settings.port if port is None else port}"


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
        """`host:port` as links name it (on every interface: the first LAN address, else loopback)."""
        return link_authority(self._settings, self.port)

    def _names(self) -> list[str]:
        return served_names(self._settings)

    def _certificate_names(self) -> list[str]:
        return self._names() if self._settings.all_interfaces else []

    @property
    def authorities(self) -> frozenset[str]:
        """Every `host:port` a Host header may name: the address (and `localhost` on loopback)."""
        names = set(self._names())
        if any(_is_loopback(name) for name in names):
            names.add("localhost")
        return frozenset(f"{shown_host(name)}:{self.port}" for name in names)

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
        """The link the QR code holds: the code and the certificate's fingerprint ride in the fragment, which
        no server or log sees; the page shows the fingerprint to compare with the browser's."""
        fingerprint = self.served_certificate().fingerprint
        return f"{self.url}pair#{code.code}/{fingerprint.replace(':', '')}"

    def served_certificate(self) -> Certificate:
        """The certificate the page is (or will be) served with (file work: off the GUI thread when not
        started yet; `ralph-desk companion pair` and `status` read it without serving)."""
        if self.certificate is None:
            self.certificate = self.home.certificate(self.host, self._certificate_names())
        return self.certificate

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
        names = self._certificate_names()
        self.certificate = await anyio.to_thread.run_sync(self.home.certificate, self.host, names)
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
        gated = CompanionGate(build_app(context), self.authorities, self._identify, context.cookie)
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
