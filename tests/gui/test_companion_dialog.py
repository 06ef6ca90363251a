"""File › Companion…: turning the page on serves it over HTTPS; the QR code, a new code, revoking a device."""

from __future__ import annotations

import hashlib
import socket
import ssl
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import httpx2 as httpx
import qasync
import segno
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from ralph_desk.gui.companion import CompanionWiring
from ralph_desk.gui.dialogs.companion import CompanionDialog
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.widgets.qr_code import QUIET_ZONE
from ralph_desk.project.companion_home import CompanionSettings
from tests.gui.conftest import controller, settle
from tests.gui.test_loop_pane import finish, qt_loop

__all__ = ["qt_loop"]

T = TypeVar("T")
SERVER_MS = 30_000


def free_port() -> int:
    """A port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def off_thread(qtbot: QtBot, call: Callable[[], T]) -> T:
    """Run a blocking client call in a thread while the window's loop (serving the page) goes on."""
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(call)
        qtbot.waitUntil(future.done, timeout=SERVER_MS)
        return future.result()


def client(url: str) -> httpx.Client:
    """A phone's browser: same-origin requests, the desk's own certificate accepted."""
    return httpx.Client(base_url=url, verify=False, headers={"origin": url}, timeout=30)


def served_fingerprint(port: int) -> str:
    """The SHA-256 fingerprint of the certificate the page serves, as a browser shows it."""
    der = ssl.PEM_cert_to_DER_cert(ssl.get_server_certificate(("127.0.0.1", port)))
    return ":".join(f"{byte:02X}" for byte in hashlib.sha256(der).digest())


def turn_on(qtbot: QtBot, dialog: CompanionDialog, wiring: CompanionWiring, port: int) -> None:
    dialog.address.setCurrentIndex(dialog.address.findData("127.0.0.1"))
    dialog.port.setValue(port)
    qtbot.mouseClick(dialog.on_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: wiring.running and dialog.code is not None, timeout=SERVER_MS)


def painted_modules(dialog: CompanionDialog) -> tuple[bytearray, ...]:
    """The QR code as painted: each module's centre read back, dark (1) or light (0)."""
    qr = dialog.qr
    image = qr.grab().toImage()
    count = len(qr.matrix)
    rows = []
    for row in range(count):
        cells = bytearray()
        for column in range(count):
            centre = qr.module_rect(row, column).center()
            cells.append(1 if image.pixelColor(centre).lightness() < 128 else 0)
        rows.append(cells)
    corner = qr.module_rect(-QUIET_ZONE, -QUIET_ZONE).center()
    assert image.pixelColor(corner).lightness() > 128  # the quiet zone is light
    return tuple(rows)


def test_the_companion_is_off_until_turned_on_then_served_over_https_with_a_qr_code_of_its_link(
    qtbot: QtBot, qt_loop: qasync.QEventLoop, window: MainWindow, project: Path
) -> None:
    wiring = controller(window).companion
    window.companion_action.trigger()
    dialog = wiring.dialog
    assert dialog is not None
    settle(qtbot, window)
    assert dialog.status.text().startswith("Off") and not dialog.pairing.isEnabled()
    assert dialog.address.itemData(0) == "127.0.0.1" and "tunnel" in dialog.note.text()
    port = free_port()

    turn_on(qtbot, dialog, wiring, port)

    url = f"https://127.0.0.1:{port}"
    assert dialog.status.text() == f"On: serving {url}/"
    assert wiring.home.settings() == CompanionSettings(True, "127.0.0.1", port)
    assert not wiring.home.folder.is_relative_to(project)  # the person's, never the project's
    code = dialog.code
    assert code is not None
    link = dialog.link.text()
    fingerprint = dialog.fingerprint.text().replace(":", "")
    assert link == f"{url}/pair#{code.code}/{fingerprint}" and dialog.code_text.text() == code.shown
    assert dialog.qr.matrix == tuple(segno.make(link).matrix)
    assert painted_modules(dialog) == dialog.qr.matrix
    assert "more." in dialog.expiry.text()
    assert dialog.fingerprint.text() == off_thread(qtbot, lambda: served_fingerprint(port))
    page = off_thread(qtbot, lambda: client(url).get("/pair"))
    assert page.status_code == 200

    qtbot.mouseClick(dialog.new_code_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.code is not None and dialog.code != code, timeout=SERVER_MS)
    assert f"#{dialog.code.code}/" in dialog.link.text() and dialog.link.text() != link
    assert dialog.qr.matrix == tuple(segno.make(dialog.link.text()).matrix)

    qtbot.mouseClick(dialog.off_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not wiring.running and dialog.status.text().startswith("Off"), timeout=SERVER_MS)
    assert wiring.home.settings().enabled is False
    assert not dialog.off_button.isEnabled() and not dialog.pairing.isEnabled() and dialog.qr.matrix == ()
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0


def test_a_device_paired_on_the_page_is_listed_and_once_revoked_is_refused(
    qtbot: QtBot, qt_loop: qasync.QEventLoop, window: MainWindow
) -> None:
    wiring = controller(window).companion
    dialog = wiring.show_dialog(window)
    settle(qtbot, window)
    port = free_port()
    turn_on(qtbot, dialog, wiring, port)
    assert dialog.code is not None
    code = dialog.code.shown
    phone = client(f"https://127.0.0.1:{port}")

    paired = off_thread(qtbot, lambda: phone.post("/pair", data={"code": code, "name": "Ana's phone"}))
    assert paired.status_code == 303
    assert off_thread(qtbot, lambda: phone.get("/")).status_code == 200
    qtbot.waitUntil(lambda: [d.name for d in dialog.devices] == ["Ana's phone"], timeout=SERVER_MS)
    assert dialog.table.item(0, 0).text() == "Ana's phone" and dialog.table.item(0, 3).text() == ""
    assert not dialog.revoke_button.isEnabled()

    dialog.table.selectRow(0)
    qtbot.mouseClick(dialog.revoke_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.devices[0].revoked_at is not None, timeout=SERVER_MS)

    assert dialog.table.item(0, 3).text() != "" and not dialog.revoke_button.isEnabled()
    assert off_thread(qtbot, lambda: phone.get("/", headers={"accept": "text/html"})).status_code == 401
    finish(qtbot, qt_loop, wiring.stop())


def test_an_address_already_taken_is_said_in_the_dialog_and_the_window_goes_on(
    qtbot: QtBot, qt_loop: qasync.QEventLoop, window: MainWindow
) -> None:
    wiring = controller(window).companion
    dialog = wiring.show_dialog(window)
    settle(qtbot, window)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        dialog.address.setCurrentIndex(dialog.address.findData("127.0.0.1"))
        dialog.port.setValue(port)
        qtbot.mouseClick(dialog.on_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: bool(wiring.problem), timeout=SERVER_MS)
    assert not wiring.running
    assert dialog.status.text().startswith(f"Could not serve the companion page on 127.0.0.1:{port}")
    assert any(f"127.0.0.1:{port}" in failure for failure in controller(window).worker.failures)


def test_every_interface_needs_the_person_to_say_they_understand(
    qtbot: QtBot, qt_loop: qasync.QEventLoop, window: MainWindow
) -> None:
    dialog = controller(window).companion.show_dialog(window)
    settle(qtbot, window)
    dialog.address.setCurrentIndex(dialog.address.findData("0.0.0.0"))
    assert "ANY network" in dialog.note.text()
    assert dialog.every_interface.isVisible() and not dialog.on_button.isEnabled()
    dialog.every_interface.setChecked(True)
    assert dialog.on_button.isEnabled()
    assert dialog.chosen(True) == CompanionSettings(True, "0.0.0.0", dialog.port.value())
