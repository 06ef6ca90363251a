"""The "Connect a client" dialog: pick a client and a transport, copy its MCP configuration."""

from __future__ import annotations

import re
import secrets
import shlex
from html import escape
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QRadioButton,
    QSizePolicy,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ralph_desk.gui.widgets.common import button, label
from ralph_desk.mcp_server.clients import (
    CLIENTS,
    DEFAULT_HTTP_PORT,
    ClientConfig,
    ServerLaunch,
    http_launch,
    kept_token,
    mcp_command,
    project_token,
    ralph_command,
    render,
    secret_db_url,
    stdio_launch,
    token_file,
)
from ralph_desk.project import DB_URL_ENV, ProjectError, ProjectPaths

CLIENT_NAMES = {
    "claude": "Claude Code",
    "vscode": "VS Code",
    "jetbrains": "JetBrains IDEs",
    "cursor": "Cursor",
    "codex": "Codex CLI",
    "copilot": "Copilot CLI",
}
STDIO, HTTP = "stdio", "http"
TOKEN_BYTES = 32
MAX_PORT = 65535
MIN_PORT = 1024


def _code_box(lines: int | None = None) -> QPlainTextEdit:
    box = QPlainTextEdit()
    box.setReadOnly(True)
    box.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    wrap = QPlainTextEdit.LineWrapMode.WidgetWidth if lines else QPlainTextEdit.LineWrapMode.NoWrap
    box.setLineWrapMode(wrap)
    if lines:
        box.setFixedHeight(box.fontMetrics().lineSpacing() * lines + 14)
    return box


class ConnectDialog(QDialog):
    """Pick a client and a transport; copy the configuration it needs and put it where it says."""

    def __init__(
        self,
        root: Path,
        embedded_url: str | None = None,
        parent: QWidget | None = None,
        db_url: str | None = None,
    ) -> None:
        super().__init__(parent)
        self.root = root
        self.db_url = db_url
        self.setWindowTitle("Connect a client")
        self.resize(880, 560)
        self.paths = ProjectPaths.at(root)
        self.token = kept_token(self.paths) or secrets.token_urlsafe(TOKEN_BYTES)
        self.config: ClientConfig | None = None
        self.clients = QListWidget()
        for client in CLIENTS:
            item = QListWidgetItem(CLIENT_NAMES.get(client, client))
            item.setData(Qt.ItemDataRole.UserRole, client)
            self.clients.addItem(item)
        self.clients.setFixedWidth(170)
        self.clients.setSpacing(3)
        self.stdio = QRadioButton("stdio — the client starts the project's server itself")
        self.http = QRadioButton("HTTP — the client connects to a server you start, with a token")
        transports = QButtonGroup(self)
        transports.addButton(self.stdio)
        transports.addButton(self.http)
        self.stdio.setChecked(True)
        self.port = QSpinBox()
        self.port.setRange(MIN_PORT, MAX_PORT)
        self.port.setValue(DEFAULT_HTTP_PORT)
        self.port.setFixedWidth(110)
        self.token_box = QLineEdit(self.token)
        self.token_box.setReadOnly(True)
        self.token_box.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.new_token = button("New token", "refresh", "Make a fresh random token")
        self.snippet = _code_box()
        self.where = label(wrap=True, selectable=True)
        self.copy_button = button("Copy", "copy", "Copy the configuration to the clipboard", primary=True)
        self.server_command = _code_box(lines=3)
        self.copy_command = button("Copy command", "copy", "Copy the command that starts the HTTP server")
        self.http_area = self._http_area()
        self._layout(embedded_url)
        self.clients.currentRowChanged.connect(lambda _row: self.update_snippet())
        transports.buttonToggled.connect(lambda *_: self.update_snippet())
        self.port.valueChanged.connect(lambda _value: self.update_snippet())
        self.new_token.clicked.connect(self.renew_token)
        self.copy_button.clicked.connect(self.copy)
        self.copy_command.clicked.connect(
            lambda: QGuiApplication.clipboard().setText(self.server_command.toPlainText())
        )
        self.clients.setCurrentRow(0)

    def _http_area(self) -> QWidget:
        area = QWidget()
        token_row = QHBoxLayout()
        token_row.addWidget(self.token_box, 1)
        token_row.addWidget(self.new_token)
        form = QFormLayout()
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("Port", self.port)
        form.addRow("Token", token_row)
        command_row = QHBoxLayout()
        command_row.addWidget(self.server_command, 1)
        command_row.addWidget(self.copy_command, 0, Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(area)
        layout.setContentsMargins(22, 0, 0, 0)
        layout.addLayout(form)
        layout.addWidget(label("Start the server with:", name="muted"))
        layout.addLayout(command_row)
        return area

    def _layout(self, embedded_url: str | None) -> None:
        served = (
            f"This window's own server ({embedded_url}) serves the loop's agents, each with a credential of "
            "its own. IDE and agent clients reach the project through the configuration below."
            if embedded_url
            else "IDE and agent clients reach the project through the configuration below."
        )
        copy_row = QHBoxLayout()
        copy_row.addWidget(self.where, 1)
        copy_row.addWidget(self.copy_button, 0, Qt.AlignmentFlag.AlignTop)
        right = QVBoxLayout()
        right.addWidget(label("Transport", name="subheading"))
        right.addWidget(self.stdio)
        right.addWidget(self.http)
        right.addWidget(self.http_area)
        right.addWidget(label("Configuration", name="subheading"))
        right.addWidget(self.snippet, 1)
        right.addLayout(copy_row)
        body = QHBoxLayout()
        body.addWidget(self.clients)
        body.addLayout(right, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        intro = label(served, name="muted", wrap=True)
        intro.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(body, 1)
        layout.addWidget(buttons)

    # --- choosing -----------------------------------------------------------------------------

    @property
    def client(self) -> str:
        """The client chosen."""
        item = self.clients.currentItem()
        return str(item.data(Qt.ItemDataRole.UserRole)) if item is not None else CLIENTS[0]

    @property
    def transport(self) -> str:
        """`stdio` or `http`."""
        return HTTP if self.http.isChecked() else STDIO

    def choose(self, client: str, transport: str = STDIO) -> None:
        """Show the configuration of `client` over `transport`."""
        self.clients.setCurrentRow(CLIENTS.index(client))
        (self.http if transport == HTTP else self.stdio).setChecked(True)
        self.update_snippet()

    def launch(self) -> ServerLaunch:
        """How the chosen transport reaches the server."""
        if self.transport == HTTP:
            return http_launch(self.port.value(), self.token)
        return stdio_launch(self.root, self.db_url)

    def update_snippet(self) -> None:
        """Render the chosen client's configuration."""
        config = render(self.client, self.launch())
        self.config = config
        self.snippet.setPlainText(config.text)
        where = re.sub(r"`([^`]+)`", r"<code>\1</code>", escape(config.where))
        self.where.setText(f"Put it in <b>{where}</b>.")
        self.copy_button.setText("Copy")
        self.http_area.setVisible(self.transport == HTTP)
        if self.transport != HTTP:
            return
        command = [*ralph_command(), *mcp_command(self.root, self.db_url), "--transport", "http"]
        command += ["--port", str(self.port.value()), "--token-file", str(token_file(self.paths))]
        try:
            # The token goes in an owner-only file, not on the command line every local user can read.
            project_token(self.paths, self.token)
        except ProjectError as error:
            self.server_command.setPlainText(f"The token could not be kept: {error}")
            return
        prefix = f"{DB_URL_ENV}=<the database URL> " if secret_db_url(self.root, self.db_url) else ""
        self.server_command.setPlainText(prefix + shlex.join(command))

    def renew_token(self) -> None:
        """Use a fresh random token."""
        self.token = secrets.token_urlsafe(TOKEN_BYTES)
        self.token_box.setText(self.token)
        self.update_snippet()

    def text(self) -> str:
        """The configuration shown."""
        return self.snippet.toPlainText()

    def copy(self) -> None:
        """Put the configuration on the clipboard."""
        QGuiApplication.clipboard().setText(self.text())
        self.copy_button.setText("Copied")
