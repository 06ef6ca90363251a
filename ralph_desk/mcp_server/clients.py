"""Ready-made MCP client configurations, each in its client's own format (notes §6)."""

from __future__ import annotations

import json
import os
import secrets
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ralph_desk.domain.toml_text import toml_string
from ralph_desk.project import DB_URL_ENV, ProjectError, ProjectPaths, contained
from ralph_desk.project.private_files import read_private_line
from ralph_desk.store.health import redacted
from ralph_desk.store.urls import sqlite_url

CLIENTS = ("claude", "vscode", "jetbrains", "cursor", "codex", "copilot")
DEFAULT_HTTP_PORT = 8766
TOKEN_ENV = "RALPH_DESK_TOKEN"
TOKEN_FILE_NAME = "http.token"


@dataclass(frozen=True)
class ServerLaunch:
    """How a client reaches the server: a command to spawn (stdio) or a URL with a token (HTTP)."""

    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()  # for the spawned server: what must not be on its command line
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


def secret_db_url(root: Path, db_url: str | None) -> str | None:
    """The custom database URL when it holds a password (it goes in `RALPH_DB_URL`, not on a command line)."""
    custom = custom_db_url(root, db_url)
    return custom if custom is not None and redacted(custom) != custom else None


def mcp_command(root: Path, db_url: str | None = None, db_url_file: Path | None = None) -> list[str]:
    """`mcp --root ROOT`, with `--db-url-file FILE` when the URL came from one, else `--db-url URL` when
    the project's database is not its own SQLite file (unless the URL holds a password: every local
    user can read a command line)."""
    if db_url_file is not None:
        return ["mcp", "--db-url-file", str(db_url_file), "--root", str(root)]
    custom = None if secret_db_url(root, db_url) else custom_db_url(root, db_url)
    return ["mcp", *(("--db-url", custom) if custom else ()), "--root", str(root)]


def stdio_launch(root: Path, db_url: str | None = None, db_url_file: Path | None = None) -> ServerLaunch:
    """Spawn `ralph-desk mcp --root ROOT [--db-url URL]` over stdio (a URL with a password in its env,
    or `--db-url-file FILE` when the URL came from a file: then the config holds no secret)."""
    command, *prefix = ralph_command()
    secret = None if db_url_file is not None else secret_db_url(root, db_url)
    return ServerLaunch(
        command=command,
        args=(*prefix, *mcp_command(root, db_url, db_url_file), "--transport", "stdio"),
        env=((DB_URL_ENV, secret),) if secret else (),
    )


def token_file(paths: ProjectPaths) -> Path:
    """Where `connect` keeps the bearer token of the project's HTTP server (owner-only, never committed)."""
    return paths.sessions_dir / TOKEN_FILE_NAME


def read_token_file(path: Path) -> str:
    """The token in `path`; refused when others may read the file (a token must stay the owner's)."""
    text = read_private_line(path, "the token")
    if any(ch.isspace() for ch in text):
        raise ProjectError(f"{path}: holds no token; allowed: one line, the token without spaces")
    return text


def project_token(paths: ProjectPaths, given: str | None = None) -> str:
    """The HTTP token: `given`, else the one `connect` kept, else a new one; kept in the token file."""
    path = token_file(paths)
    token = given or kept_token(paths) or secrets.token_urlsafe(32)
    contained.write_private_text(paths.root, path, token + "\n")
    return token


def kept_token(paths: ProjectPaths) -> str | None:
    """The token `connect` kept, unless others could read (or a clone could have planted) the file."""
    try:
        descriptor = contained.open_descriptor(paths.root, token_file(paths), os.O_RDONLY)
    except (OSError, ProjectError):
        return None
    with os.fdopen(descriptor, "rb") as stream:
        if sys.platform != "win32" and os.fstat(stream.fileno()).st_mode & 0o077:
            return None  # a checkout makes files 0644: such a token may be known to whoever committed it
        words = stream.read().decode("utf-8", errors="replace").split()
    return words[0] if len(words) == 1 else None


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
    if launch.env:
        entry["env"] = dict(launch.env)
    return entry


def _codex(launch: ServerLaunch) -> str:
    lines = ["[mcp_servers.ralph]"]
    if launch.is_http:
        lines.append(f"url = {toml_string(launch.url or '')}")
        lines.append(f'http_headers = {{ "Authorization" = {toml_string(f"Bearer {launch.token}")} }}')
    else:
        lines.append(f"command = {toml_string(launch.command or '')}")
        lines.append("args = [" + ", ".join(toml_string(arg) for arg in launch.args) + "]")
        if launch.env:
            pairs = ", ".join(f"{toml_string(key)} = {toml_string(value)}" for key, value in launch.env)
            lines.append(f"env = {{ {pairs} }}")
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
