"""The window's companion page: served in the window's event loop while the person has it on.

Whether it is on, and where, is the person's (CompanionHome, outside the project). It starts with the
project when on, and when the person turns it on in File › Companion…; it stops when turned off and
when the window closes. Every database and file call goes through the window's worker (or a thread).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

from ralph_desk.companion.switch import LoopSwitch
from ralph_desk.domain.enums import ChangeTopic
from ralph_desk.domain.records import Change, Device
from ralph_desk.gui.backend import PairingCode, Services
from ralph_desk.gui.dialogs.companion import CompanionDialog
from ralph_desk.gui.worker import Worker
from ralph_desk.project.companion_home import CompanionHome, CompanionSettings

if TYPE_CHECKING:  # the web stack loads only when the page is served
    from ralph_desk.companion.host import CompanionHost

log = logging.getLogger("ralph_desk.gui.companion")


@dataclass(frozen=True)
class CompanionState:
    """What the dialog shows of the companion when it opens."""

    settings: CompanionSettings
    addresses: list[str]
    devices: list[Device]


def _host(
    services: Services, home: CompanionHome, settings: CompanionSettings, switch: LoopSwitch, title: str
) -> CompanionHost:
    """A host for `settings` (off the GUI thread: it reads the secret and imports the web stack)."""
    from ralph_desk.companion.host import CompanionHost

    return CompanionHost(services, home, settings, switch, title)


class CompanionWiring(QObject):
    """Serves the companion page while it is on, and answers the Companion dialog."""

    sig_changed = Signal()
    """The page started, stopped, or could not start (`problem` says why)."""

    def __init__(
        self,
        services: Services,
        worker: Worker,
        switch: LoopSwitch,
        project_title: Callable[[], str],
        home: CompanionHome | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.services = services
        self.worker = worker
        self.switch = switch
        self.project_title = project_title
        self.home = home or CompanionHome.of(services.paths)
        self.host: CompanionHost | None = None
        self.problem = ""
        """Why the page could not be served the last time it was asked to ("" when it could)."""
        self.settings: CompanionSettings | None = None
        """The settings last read or chosen (None until the project's saved ones were read)."""
        self.dialog: CompanionDialog | None = None
        self.tasks: set[asyncio.Task[None]] = set()
        self._serving = asyncio.Lock()

    @property
    def running(self) -> bool:
        """Whether the page is served now."""
        return self.host is not None and self.host.running

    # --- serving ------------------------------------------------------------------------------

    async def start_saved(self) -> None:
        """At project open: serve the page when the person has it on (raises when it cannot)."""
        settings = await asyncio.to_thread(self.home.settings)
        self.settings = settings
        if settings.enabled:
            await self.serve(settings)

    async def serve(self, settings: CompanionSettings) -> None:
        """Serve on `settings`' address (after stopping what served before); raises when it cannot."""
        async with self._serving:
            await self._stop()
            services, home, switch, title = self.services, self.home, self.switch, self.project_title()
            try:
                host = await asyncio.to_thread(_host, services, home, settings, switch, title)
                await host.start()
            except Exception as error:
                self.problem = (
                    f"Could not serve the companion page on {settings.host}:{settings.port}: {error}"
                )
                log.warning("%s", self.problem)
                self.sig_changed.emit()
                raise
            self.host, self.problem = host, ""
        self.sig_changed.emit()

    async def stop(self) -> None:
        """Stop serving the page (turned off, or the window closes)."""
        async with self._serving:
            await self._stop()

    async def _stop(self) -> None:
        host, self.host = self.host, None
        if host is not None:
            await host.stop()
            self.sig_changed.emit()

    def apply(self, settings: CompanionSettings) -> None:
        """Keep the person's choice, then serve on it or stop (a failure is shown, the window goes on)."""
        home = self.home
        verb = "turn the companion page on" if settings.enabled else "turn the companion page off"
        self.worker.submit(
            verb, lambda: home.save(settings), lambda _: self._launch(self._follow(settings)), busy=True
        )

    async def _follow(self, settings: CompanionSettings) -> None:
        self.settings = settings
        if not settings.enabled:
            await self.stop()
            return
        try:
            await self.serve(settings)
        except Exception:  # shown in the window and the dialog: the person picks another address or port
            self.worker.fail(self.problem)

    def _launch(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    # --- pairing ------------------------------------------------------------------------------

    def read(self, then: Callable[[CompanionState], None]) -> None:
        """Read the saved settings, this computer's addresses and the paired devices."""
        home, services = self.home, self.services

        def read_state() -> CompanionState:
            from ralph_desk.project.companion_addresses import choosable_addresses

            devices = services.companion(home.secret()).devices()
            return CompanionState(home.settings(), choosable_addresses(), devices)

        self.worker.submit("read the companion settings", read_state, then)

    def read_devices(self, then: Callable[[list[Device]], None]) -> None:
        """Read the paired devices."""
        home, services = self.home, self.services
        self.worker.submit(
            "read the paired devices", lambda: services.companion(home.secret()).devices(), then
        )

    def new_code(self, then: Callable[[PairingCode, str], None]) -> None:
        """A fresh one-time pairing code for the page being served, and the link the QR code holds."""
        host = self.host
        if host is None:
            return
        self.worker.submit(
            "make a pairing code", host.new_code, lambda code: then(code, host.pairing_link(code))
        )

    def revoke(self, device: Device, then: Callable[[Device], None]) -> None:
        """Revoke a paired device: its next request is refused."""
        home, services = self.home, self.services
        self.worker.submit(
            f"revoke {device.name}",
            lambda: services.companion(home.secret()).revoke(device.id),
            then,
            busy=True,
            done=f"Revoked {device.name}: the companion page refuses it from now on.",
        )

    # --- the dialog ---------------------------------------------------------------------------

    def show_dialog(self, parent: QWidget) -> CompanionDialog:
        """File › Companion…: turn the page on or off, pair a phone, revoke devices."""
        dialog = self.dialog
        if dialog is None:
            dialog = CompanionDialog(parent)
            dialog.sig_apply_requested.connect(self.apply)
            dialog.sig_new_code_requested.connect(lambda: self.new_code(dialog.show_code))
            dialog.sig_revoke_requested.connect(
                lambda device: self.revoke(device, lambda _: self.read_devices(dialog.show_devices))
            )
            self.sig_changed.connect(self._show_serving)
            self.dialog = dialog
        self.read(dialog.show_state)
        self._show_serving()
        dialog.open()
        return dialog

    def _show_serving(self) -> None:
        dialog = self.dialog
        if dialog is None:
            return
        host = self.host
        if host is not None and self.running:
            dialog.show_serving(host.url, host.fingerprint)
            if dialog.code is None or dialog.served_url != host.url:
                dialog.served_url = host.url
                self.new_code(dialog.show_code)
        else:
            dialog.show_off(self.problem)

    def on_changes(self, changes: list[Change]) -> None:
        """A device paired, was used or revoked: the open dialog's list follows."""
        dialog = self.dialog
        if (
            dialog is not None
            and dialog.isVisible()
            and any(c.topic == ChangeTopic.COMPANION for c in changes)
        ):
            self.read_devices(dialog.show_devices)
