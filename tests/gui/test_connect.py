"""The Connect-a-client dialog: each client × transport gives a configuration that parses; Copy copies it."""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from ralph_desk.gui.dialogs.connect import HTTP, STDIO, ConnectDialog
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.mcp_server.clients import CLIENTS
from tests.gui.conftest import controller


@pytest.fixture
def dialog(qtbot: QtBot, project: Path) -> ConnectDialog:
    shown = ConnectDialog(project, "http://127.0.0.1:49152/mcp")
    qtbot.addWidget(shown)
    shown.show()
    return shown


def server_entry(client: str, text: str) -> dict[str, object]:
    """The `ralph` server entry of a client's configuration, parsed in the client's format."""
    if client == "codex":
        return dict(tomllib.loads(text)["mcp_servers"]["ralph"])
    document = json.loads(text)
    servers = document.get("mcpServers") or document["servers"]
    return dict(servers["ralph"])


@pytest.mark.parametrize("client", CLIENTS)
def test_the_stdio_configuration_parses_and_starts_this_projects_server(
    dialog: ConnectDialog, project: Path, client: str
) -> None:
    dialog.choose(client, STDIO)

    entry = server_entry(client, dialog.text())
    listed = entry["args"]
    assert isinstance(listed, list)
    args = [str(arg) for arg in listed]
    assert args[-5:] == ["mcp", "--root", str(project), "--transport", "stdio"]
    assert not dialog.http_area.isVisible()
    shown = re.sub("<[^>]+>", "", dialog.where.text())
    assert dialog.config is not None and dialog.config.where.replace("`", "") in shown


@pytest.mark.parametrize("client", CLIENTS)
def test_the_http_configuration_parses_and_carries_the_port_and_token(
    dialog: ConnectDialog, client: str
) -> None:
    dialog.port.setValue(9123)
    dialog.choose(client, HTTP)

    entry = server_entry(client, dialog.text())
    assert entry["url"] == "http://127.0.0.1:9123/mcp"
    headers = entry.get("headers") or entry.get("http_headers")
    assert headers == {"Authorization": f"Bearer {dialog.token}"}
    assert dialog.http_area.isVisible()
    command = shlex.split(dialog.server_command.toPlainText())
    assert command[-6:] == ["--transport", "http", "--port", "9123", "--token-file", command[-1]]
    assert dialog.token not in command  # the token is in an owner-only file, not on a command line
    kept = Path(command[-1])
    assert kept.read_text().strip() == dialog.token and kept.stat().st_mode & 0o777 == 0o600


def test_copy_puts_the_configuration_on_the_clipboard(dialog: ConnectDialog) -> None:
    dialog.choose("vscode", HTTP)

    dialog.copy_button.click()

    assert QApplication.clipboard().text() == dialog.text()
    assert json.loads(QApplication.clipboard().text())["servers"]["ralph"]["type"] == "http"
    assert dialog.copy_button.text() == "Copied"


def test_a_new_token_changes_the_configuration_and_the_server_command(dialog: ConnectDialog) -> None:
    dialog.choose("cursor", HTTP)
    before = dialog.token

    dialog.new_token.click()

    assert dialog.token != before
    assert before not in dialog.text() and dialog.token in dialog.text()
    kept = Path(shlex.split(dialog.server_command.toPlainText())[-1])
    assert kept.read_text().strip() == dialog.token


def test_the_file_menu_opens_the_dialog(window: MainWindow) -> None:
    window.connect_action.trigger()

    shown = controller(window).connect_dialog
    assert isinstance(shown, ConnectDialog) and shown.isVisible()
    assert shown.clients.count() == len(CLIENTS)
    shown.close()


def test_a_window_on_another_database_names_it_in_the_stdio_configuration_and_server_command(
    qtbot: QtBot, project: Path
) -> None:
    url = "sqlite:////srv/ralph/shared.db"
    shown = ConnectDialog(project, None, None, url)
    qtbot.addWidget(shown)

    shown.choose("claude", STDIO)
    args = [str(arg) for arg in server_entry("claude", shown.text())["args"]]  # type: ignore[attr-defined]
    shown.choose("claude", HTTP)
    command = shlex.split(shown.server_command.toPlainText())

    assert args[args.index("--db-url") + 1] == url
    assert args[-4:] == ["--root", str(project), "--transport", "stdio"]
    assert command[command.index("--db-url") + 1] == url


def test_the_projects_own_database_is_not_repeated_in_the_configuration(window: MainWindow) -> None:
    window.connect_action.trigger()

    shown = controller(window).connect_dialog
    assert shown is not None
    assert "--db-url" not in shown.text()
    shown.close()


def test_a_database_password_is_in_the_stdio_env_and_never_in_a_command(qtbot: QtBot, project: Path) -> None:
    url = "postgresql+psycopg://ralph:pw-5e1d9c@db.example.invalid/harbour"
    shown = ConnectDialog(project, None, None, url)
    qtbot.addWidget(shown)

    shown.choose("vscode", STDIO)
    entry = server_entry("vscode", shown.text())
    shown.choose("vscode", HTTP)

    assert entry["env"] == {"RALPH_DB_URL": url} and "pw-5e1d9c" not in json.dumps(entry["args"])
    command = shown.server_command.toPlainText()
    assert command.startswith("RALPH_DB_URL=<the database URL> ") and "pw-5e1d9c" not in command
