"""Ready-made MCP client configurations, each in its client's own format (notes §6)."""

from __future__ import annotations

import json
import secrets
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ralph_desk.project import ProjectPaths
from ralph_desk.store.urls import sqlite_url

CLIENTS = ("claude", "vscode", "jetbrains", "cursor", "codex", "copilot")
DEFAULT_HTTP_PORT = 8766


@dataclass(frozen=True)
class ServerLaunch:
    """How a client reaches the server: a command to spawn (stdio) or a URL with a token (HTTP)."""

    command: str | None = None
    args: tuple[str, ...] = ()
    url: str | None = None
    token: str | None = None

    @property
    def is_http(self) -> bool:
        return self.url is not None


@dataclass(frozen=True)
class ClientConfig:
    """A client's configuration text and the file name it is saved under."""

    client: str
    file_name: str
    text: str
    where: str


def ralph_command() -> list[str]:
    """The command that runs ralph-desk from this installation."""
    if getattr(sys, "frozen", False):  # the PyInstaller app: its executable is ralph-desk itself
        return [sys.executable]
    script = Path(sys.executable).with_name("ralph-desk")
    return [str(script)] if script.exists() else [sys.executable, "-m", "ralph_desk"]


def custom_db_url(root: Path, db_url: str | None) -> str | None:
    """`db_url` when it is not the project's own SQLite file (a spawned server must be told it)."""
    if db_url is None or db_url == sqlite_url(ProjectPaths.at(root).db_file):
        return None
    return db_url


def mcp_command(root: Path, db_url: str | None = None) -> list[str]:
    """`mcp --root ROOT`, with `--db-url URL` when the project's database is not its own SQLite file."""
    custom = custom_db_url(root, db_url)
    return ["mcp", *(("--db-url", custom) if custom else ()), "--root", str(root)]


def stdio_launch(root: Path, db_url: str | None = None) -> ServerLaunch:
    """Spawn `ralph-desk mcp --root ROOT [--db-url URL]` over stdio."""
    command, *prefix = ralph_command()
    return ServerLaunch(command=command, args=(*prefix, *mcp_command(root, db_url), "--transport", "stdio"))


def http_launch(port: int = DEFAULT_HTTP_PORT, token: str | None = None) -> ServerLaunch:
    """Connect to a `ralph-desk mcp --transport http` server on loopback."""
    return ServerLaunch(url=f"http://127.0.0.1:{port}/mcp", token=token or secrets.token_urlsafe(32))


def _entry(launch: ServerLaunch, http_type: str | None, stdio_type: str | None) -> dict[str, Any]:
    if launch.is_http:
        entry: dict[str, Any] = {"type": http_type} if http_type else {}
        entry.update(url=launch.url, headers={"Authorization": f"Bearer {launch.token}"})
        return entry
    entry = {"type": stdio_type} if stdio_type else {}
    entry.update(command=launch.command, args=list(launch.args))
    return entry


def _toml_string(value: str) -> str:
    return json.dumps(value)


def _codex(launch: ServerLaunch) -> str:
    lines = ["[mcp_servers.ralph]"]
    if launch.is_http:
        lines.append(f"url = {_toml_string(launch.url or '')}")
        lines.append(f'http_headers = {{ "Authorization" = {_toml_string(f"Bearer {launch.token}")} }}')
    else:
        lines.append(f"command = {_toml_string(launch.command or '')}")
        lines.append("args = [" + ", ".join(_toml_string(arg) for arg in launch.args) + "]")
    lines.append("tool_timeout_sec = 600")
    return "\n".join(lines) + "\n"


def render(client: str, launch: ServerLaunch) -> ClientConfig:
    """The configuration of `client` for this launch."""

    def as_json(document: dict[str, Any]) -> str:
        return json.dumps(document, indent=2) + "\n"

    match client:
        case "claude":
            text = as_json({"mcpServers": {"ralph": _entry(launch, "http", "stdio")}})
            return ClientConfig(
                client, "claude.mcp.json", text, ".mcp.json in the project, or `claude --mcp-config FILE`"
            )
        case "vscode":
            text = as_json({"servers": {"ralph": _entry(launch, "http", "stdio")}})
            return ClientConfig(client, "vscode.mcp.json", text, ".vscode/mcp.json in the workspace")
        case "jetbrains":
            text = as_json({"servers": {"ralph": _entry(launch, None, None)}})
            return ClientConfig(
                client, "jetbrains.mcp.json", text, "Copilot: mcp.json (Settings › Tools › MCP)"
            )
        case "cursor":
            text = as_json({"mcpServers": {"ralph": _entry(launch, None, None)}})
            return ClientConfig(client, "cursor.mcp.json", text, ".cursor/mcp.json in the project")
        case "copilot":
            entry = {**_entry(launch, "http", "local"), "tools": ["*"]}
            text = as_json({"mcpServers": {"ralph": entry}})
            return ClientConfig(
                client,
                "copilot.mcp-config.json",
                text,
                "~/.copilot/mcp-config.json or --additional-mcp-config",
            )
        case "codex":
            return ClientConfig(
                client, "codex.config.toml", _codex(launch), "$CODEX_HOME/config.toml (default ~/.codex)"
            )
    raise ValueError(f"unknown client {client!r}; allowed: {', '.join(CLIENTS)}")
