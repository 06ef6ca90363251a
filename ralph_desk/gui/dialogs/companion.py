"""File › Companion…: turn the companion page on or off for this project, pair a phone, revoke devices."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ralph_desk.domain.records import Device
from ralph_desk.gui import fmt
from ralph_desk.gui.backend import PairingCode
from ralph_desk.gui.widgets.common import button, label
from ralph_desk.gui.widgets.qr_code import QrCode
from ralph_desk.project.companion_addresses import note_for
from ralph_desk.project.companion_home import ALL_INTERFACES, DEFAULT_PORT, CompanionSettings

if TYPE_CHECKING:
    from ralph_desk.gui.companion import CompanionState

TICK_MS = 1000
COLUMNS = ("Name", "Paired", "Last use", "Revoked")
EVERY_INTERFACE = "0.0.0.0"


class CompanionDialog(QDialog):
    """Shows the companion's settings, its pairing code as a QR code and text, and the paired devices."""

    sig_apply_requested = Signal(object)
    """Keep these `CompanionSettings` and serve (or stop) accordingly."""
    sig_new_code_requested = Signal()
    sig_revoke_requested = Signal(object)
    """Revoke this `Device`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Companion page")
        self.settings = CompanionSettings()
        self.code: PairingCode | None = None
        self.served_url = ""
        self.devices: list[Device] = []
        self.address = QComboBox()
        self.address.setToolTip("One of this computer's addresses: the page listens there only")
        self.port = QSpinBox()
        self.port.setRange(1, 65535)
        self.port.setValue(DEFAULT_PORT)
        self.note = label(wrap=True)
        self.every_interface = QCheckBox(
            "I understand: any network this computer is on can reach the page on every interface"
        )
        self.status = label(wrap=True, selectable=True)
        self.on_button = button("Turn on", None, "Serve the page on this address and port", primary=True)
        self.off_button = button("Turn off", None, "Stop serving the page (it stays off at the next start)")
        self.qr = QrCode()
        self.link = label(selectable=True)
        self.link.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.code_text = label(selectable=True)
        self.code_text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.fingerprint = label(wrap=True, selectable=True)
        self.fingerprint.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.expiry = label()
        self.new_code_button = button("New code", "refresh", "Make a fresh one-time code (5 minutes)")
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.revoke_button = button("Revoke", None, "Refuse this device from its next request on")
        self.pairing = self._pairing_box()
        self.timer = QTimer(self)
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self._tick)
        self._layout()
        self.address.currentIndexChanged.connect(lambda _index: self._show_note())
        self.port.valueChanged.connect(lambda _value: self._show_note())
        self.every_interface.toggled.connect(lambda _on: self._show_note())
        self.on_button.clicked.connect(lambda: self._apply(True))
        self.off_button.clicked.connect(lambda: self._apply(False))
        self.new_code_button.clicked.connect(self.sig_new_code_requested)
        self.revoke_button.clicked.connect(self._revoke)
        self.table.itemSelectionChanged.connect(self._enable_revoke)
        self.show_off("")
        self.resize(620, 760)

    def _pairing_box(self) -> QGroupBox:
        box = QGroupBox("Pair a phone")
        form = QFormLayout()
        form.addRow("Link:", self.link)
        form.addRow("Code:", self.code_text)
        form.addRow("Certificate:", self.fingerprint)
        form.addRow("", self.expiry)
        form.addRow("", self.new_code_button)
        hint = label(
            "Scan the code with the phone's camera, or open the link and type the code. The browser warns "
            "about the certificate (the desk made it itself): compare its SHA-256 fingerprint with the "
            "one above before going on.",
            "muted",
            wrap=True,
        )
        row = QHBoxLayout()
        row.addWidget(self.qr, 0, Qt.AlignmentFlag.AlignTop)
        right = QVBoxLayout()
        right.addLayout(form)
        right.addWidget(hint)
        right.addStretch(1)
        row.addLayout(right, 1)
        box.setLayout(row)
        return box

    def _layout(self) -> None:
        where = QFormLayout()
        where.addRow("Address:", self.address)
        where.addRow("Port:", self.port)
        buttons = QHBoxLayout()
        buttons.addWidget(self.on_button)
        buttons.addWidget(self.off_button)
        buttons.addStretch(1)
        serving = QGroupBox("Serve the page for this project")
        serving_layout = QVBoxLayout(serving)
        serving_layout.addWidget(
            label(
                "Answer questions, approve suggestions and review from a phone's browser. It is off "
                "unless you turn it on here; the setting is yours (kept outside the project folder).",
                "muted",
                wrap=True,
            )
        )
        serving_layout.addLayout(where)
        serving_layout.addWidget(self.note)
        serving_layout.addWidget(self.every_interface)
        serving_layout.addLayout(buttons)
        serving_layout.addWidget(self.status)
        devices = QGroupBox("Paired devices")
        devices_layout = QVBoxLayout(devices)
        devices_layout.addWidget(self.table)
        revoke_row = QHBoxLayout()
        revoke_row.addStretch(1)
        revoke_row.addWidget(self.revoke_button)
        devices_layout.addLayout(revoke_row)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(serving)
        layout.addWidget(self.pairing)
        layout.addWidget(devices, 1)
        layout.addWidget(close)

    # --- what the person chose ----------------------------------------------------------------

    def chosen(self, enabled: bool) -> CompanionSettings:
        """The settings as chosen in the dialog."""
        host = str(self.address.currentData() or self.settings.host)
        return replace(self.settings, enabled=enabled, host=host, port=self.port.value())

    def _apply(self, enabled: bool) -> None:
        self.settings = self.chosen(enabled)
        self.sig_apply_requested.emit(self.settings)

    def _show_note(self) -> None:
        host = str(self.address.currentData() or "")
        every = host in ALL_INTERFACES
        self.every_interface.setVisible(every)
        self.note.setText(note_for(host, self.port.value()) if host else "")
        self.on_button.setEnabled(bool(host) and (not every or self.every_interface.isChecked()))

    # --- what the window shows ----------------------------------------------------------------

    def show_state(self, state: CompanionState) -> None:
        """The saved settings, this computer's addresses and the paired devices."""
        self.settings = state.settings
        self.address.blockSignals(True)
        self.address.clear()
        for address in state.addresses:
            shown = (
                f"{address} — this computer only (for your SSH/VPN tunnel)"
                if address == "127.0.0.1"
                else address
            )
            self.address.addItem(shown, address)
        if state.settings.host not in state.addresses and state.settings.host not in ALL_INTERFACES:
            self.address.addItem(
                f"{state.settings.host} (not an address of this computer now)", state.settings.host
            )
        self.address.addItem(
            f"{EVERY_INTERFACE} — every interface (any network can reach it)", EVERY_INTERFACE
        )
        if state.settings.host == "::":
            self.address.addItem(":: — every interface, IPv6 too", "::")
        self.address.setCurrentIndex(max(0, self.address.findData(state.settings.host)))
        self.address.blockSignals(False)
        self.every_interface.setChecked(state.settings.all_interfaces and state.settings.enabled)
        self.port.setValue(state.settings.port or DEFAULT_PORT)
        self._show_note()
        self.show_devices(state.devices)

    def show_serving(self, url: str, fingerprint: str) -> None:
        """The page is served at `url`."""
        self.status.setText(f"On: serving {url}")
        self.fingerprint.setText(fingerprint)
        self.pairing.setEnabled(True)
        self.off_button.setEnabled(True)
        self.on_button.setText("Serve here instead")
        if self.code is not None:  # the dialog opened again: the code's countdown goes on
            self._tick()
            self.timer.start()

    def show_off(self, problem: str) -> None:
        """The page is not served (`problem`: why it could not be)."""
        self.status.setText(problem or "Off: no port is open for the companion page.")
        self.code = None
        self.served_url = ""
        self.qr.show_text("")
        self.link.setText("")
        self.code_text.setText("")
        self.fingerprint.setText("")
        self.expiry.setText("Turn the page on to pair a phone.")
        self.pairing.setEnabled(False)
        self.off_button.setEnabled(bool(problem) or self.settings.enabled)
        self.on_button.setText("Turn on")
        self.timer.stop()

    def show_code(self, code: PairingCode, link: str) -> None:
        """A fresh pairing code and the link the QR code holds."""
        self.code = code
        self.qr.show_text(link)
        self.link.setText(link)
        self.code_text.setText(code.shown)
        self._tick()
        self.timer.start()

    def _tick(self) -> None:
        code = self.code
        if code is None:
            return
        left = (code.expires_at - datetime.now(UTC)).total_seconds()
        if left <= 0:
            self.expiry.setText("This code has expired: press New code.")
            self.timer.stop()
            return
        minutes, seconds = divmod(int(left), 60)
        self.expiry.setText(f"The code works once, for {minutes}:{seconds:02d} more.")

    def show_devices(self, devices: Sequence[Device]) -> None:
        """The paired devices, revoked ones too."""
        chosen = self.selected()
        self.devices = list(devices)
        self.table.setRowCount(len(self.devices))
        for row, device in enumerate(self.devices):
            cells = (
                device.name,
                fmt.when(device.paired_at),
                fmt.ago(device.last_used_at) if device.last_used_at else "never",
                fmt.when(device.revoked_at) if device.revoked_at else "",
            )
            for column, text in enumerate(cells):
                self.table.setItem(row, column, QTableWidgetItem(text))
            if chosen is not None and device.id == chosen.id:
                self.table.selectRow(row)
        self._enable_revoke()

    def selected(self) -> Device | None:
        """The device selected in the list."""
        rows = self.table.selectionModel().selectedRows()
        return self.devices[rows[0].row()] if rows and rows[0].row() < len(self.devices) else None

    def _enable_revoke(self) -> None:
        device = self.selected()
        self.revoke_button.setEnabled(device is not None and device.revoked_at is None)

    def _revoke(self) -> None:
        device = self.selected()
        if device is not None and device.revoked_at is None:
            self.sig_revoke_requested.emit(device)

    def done(self, result: int) -> None:
        self.timer.stop()
        super().done(result)
