"""No secret where another user or a log can see it: a discipline's server keys, the database, the HTTP token.

Another local user can read every process's command line (`/proc/PID/cmdline`) and every file of mode
0644; only the owner can read a process's environment and a file of mode 0600.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sqlite3
import sys
import threading
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import httpx2
import pytest

from ralph_desk import cli
from ralph_desk.domain.enums import TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.loop.build import RunOptions, build_runner
from ralph_desk.loop.model import LoopSettings
from ralph_desk.mcp_server import clients as client_configs
from ralph_desk.mcp_server.embedded import EmbeddedMcp
from ralph_desk.project import ProjectPaths, init_project
from ralph_desk.services.container import Services
from tests.hardening.support import RawHttpSession, Seeded, http_process, mode_of, umask

ENV_SECRET = "sk-env-4f9c2e7a1b"
HEADER_SECRET = "hdr-key-8d3b6a0e5c"
SECRETS = (ENV_SECRET, HEADER_SECRET)
WAIT_S = 120.0

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/PID/cmdline")

# A stand-in for `codex exec --json`: it tells the test its pid and waits until the test has looked at
# its command line and environment, then speaks Codex's JSON stream, echoing what a careless server
# might print: the key itself.
STAND_IN_CODEX = """\
import json, os, socket, sys
with socket.create_connection(("127.0.0.1", int(os.environ["HARDENING_PORT"])), timeout=60) as line:
    line.sendall(str(os.getpid()).encode() + b"\\n")
    line.recv(1)
print(json.dumps({"type": "thread.started", "thread_id": "t-secret"}), flush=True)
print(json.dumps({"type": "item.completed", "item": {"id": "i0", "type": "agent_message",
      "text": "the server said its key is " + os.environ.get("API_KEY", "(none)")}}), flush=True)
print("stderr: header " + os.environ.get("RALPH_MCP_DOCS_HEADER_0", "(none)"), file=sys.stderr, flush=True)
print(json.dumps({"type": "turn.completed", "usage": {"input_tokens": 1, "output_tokens": 1}}), flush=True)
"""


@dataclass
class SeenProcess:
    """What the test read of the agent's process while it ran."""

    cmdline: bytes = b""
    environ: bytes = b""
    errors: list[str] = field(default_factory=list)


def watch_agent(listener: socket.socket, seen: SeenProcess) -> None:
    """Accept the stand-in's call, read its /proc entries while it waits, then let it go on."""
    try:
        connection, _ = listener.accept()
        with connection:
            connection.settimeout(WAIT_S)
            pid = int(connection.makefile().readline())
            seen.cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            seen.environ = Path(f"/proc/{pid}/environ").read_bytes()
            connection.sendall(b"g")
    except (OSError, ValueError) as error:
        seen.errors.append(repr(error))


@pytest.fixture
def stand_in_codex(tmp_path: Path) -> Path:
    script = tmp_path / "bin" / "codex"
    script.parent.mkdir()
    script.write_text(f"#!{sys.executable}\n{STAND_IN_CODEX}", encoding="utf-8")
    script.chmod(0o755)
    return script


@pytest.mark.slow
def test_a_codex_session_keeps_server_secrets_off_its_command_line_and_out_of_every_log(
    seeded: tuple[ProjectPaths, Seeded], stand_in_codex: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths, ids = seeded
    services = Services.open(paths)
    try:
        servers = {
            "search": {"command": "search-mcp", "args": ["--stdio"], "env": {"API_KEY": ENV_SECRET}},
            "docs": {"url": "http://127.0.0.1:9/mcp", "headers": {"X-Key": HEADER_SECRET}},
        }
        services.disciplines.update("backend", mcp_servers=servers)
        for task in services.tasks.list():
            if task.id != ids.parser:
                services.tasks.move(task.id, TaskStatus.SKIPPED.value, Mover.IMPORT)
        listener = socket.create_server(("127.0.0.1", 0))
        listener.settimeout(WAIT_S)
        monkeypatch.setenv("HARDENING_PORT", str(listener.getsockname()[1]))
        seen = SeenProcess()
        watcher = threading.Thread(target=watch_agent, args=(listener, seen), daemon=True)
        watcher.start()
        settings = LoopSettings(  # unconfined: the test reads the agent's /proc entry by its process id
            agent="codex",
            agent_bin=str(stand_in_codex),
            max_iterations=1,
            session_timeout_s=WAIT_S,
            sandbox=False,
        )

        async def main() -> None:
            embedded = EmbeddedMcp(services)
            await embedded.start()
            try:
                await asyncio.wait_for(
                    build_runner(services, embedded, settings, RunOptions(exit_when_idle=True)).run(), 240
                )
            finally:
                await embedded.stop()

        with umask(0o022):
            asyncio.run(main())
        watcher.join(WAIT_S)
        listener.close()
    finally:
        services.close()
    assert not seen.errors and seen.cmdline, seen.errors
    assert b"mcp_servers.search" in seen.cmdline  # the servers are there, by name and command
    for secret in SECRETS:
        assert secret.encode() not in seen.cmdline, f"{secret} is on the agent's command line"
        assert secret.encode() in seen.environ, f"{secret} did not reach the agent's environment"
    logs = sorted(path for path in paths.logs_dir.rglob("*") if path.is_file())
    assert any(path.suffix == ".json" for path in logs) and any(path.suffix == ".log" for path in logs)
    transcript = next(path for path in logs if path.suffix == ".log" and "mcp" not in path.name)
    assert "the server said its key is [redacted]" in transcript.read_text()
    for path in logs:
        text = path.read_text(encoding="utf-8", errors="replace")
        for secret in SECRETS:
            assert secret not in text, f"{path.name} holds {secret}"
    for path in logs:
        assert mode_of(path) == 0o600, f"{path.name} is mode {mode_of(path):04o}"
    summary = json.loads(next(path for path in logs if path.suffix == ".json").read_text())
    assert not any(secret in " ".join(summary["argv"]) for secret in SECRETS)


# --- the database: owner-only from the start ------------------------------------------------------------


def database_files(paths: ProjectPaths) -> dict[str, int]:
    """The database and its SQLite companions that exist, with their modes."""
    return {
        path.name: mode_of(path)
        for path in (paths.db_file.with_name(paths.db_file.name + suffix) for suffix in ("", "-wal", "-shm"))
        if path.exists()
    }


@pytest.mark.sqlite_only
def test_the_database_is_owner_only_from_the_start_whatever_the_umask(tmp_path: Path) -> None:
    with umask(0o022):
        paths = init_project(tmp_path / "fresh", title="Private")
        services = Services.open(paths)
        try:
            services.features.create("core", "Core")
            # While the connection is open SQLite keeps its -wal and -shm files: all three are there.
            assert set(database_files(paths)) == {"ralph.db", "ralph.db-wal", "ralph.db-shm"}
            assert database_files(paths) == dict.fromkeys(database_files(paths), 0o600)
        finally:
            services.close()
        assert mode_of(paths.db_dir) == 0o700


@pytest.mark.sqlite_only
def test_an_older_projects_open_database_is_made_owner_only(tmp_path: Path) -> None:
    with umask(0o022):
        paths = init_project(tmp_path / "older", title="Older")
        paths.db_file.chmod(0o644)
        writer = sqlite3.connect(paths.db_file)  # an older version's database, its WAL left behind
        writer.execute("PRAGMA journal_mode=WAL")
        writer.execute("CREATE TABLE scratch (x)")
        paths.db_file.with_name("ralph.db-wal").chmod(0o644)
        services = Services.open(paths)
        try:
            assert database_files(paths) == dict.fromkeys(database_files(paths), 0o600)
        finally:
            services.close()
            writer.close()


# --- connect over HTTP: the token in an owner-only file, never on a command line ----------------------------


def test_connect_http_keeps_the_token_in_an_owner_only_file_and_never_suggests_the_command_line(
    seeded: tuple[ProjectPaths, Seeded], capsys: pytest.CaptureFixture[str]
) -> None:
    paths, _ = seeded
    argv = ["connect", "--root", str(paths.root), "--client", "vscode", "--transport", "http"]
    with umask(0o022):
        assert cli.main(argv) == 0
    told = capsys.readouterr().err
    token_file = client_configs.token_file(paths)
    token = token_file.read_text().strip()
    assert mode_of(token_file) == 0o600 and token
    assert f"--token-file {token_file}" in told and "--token " not in told and token not in told
    assert token in (paths.clients_dir / "vscode.mcp.json").read_text()
    # A second client gets the same token (one server serves them all) ...
    assert cli.main([*argv[:4], "claude", *argv[5:]]) == 0
    assert token in (paths.clients_dir / "claude.mcp.json").read_text()
    # ... but a token file a clone carried (mode 0644: whoever committed it knows it) is never reused.
    token_file.write_text("planted-token\n")
    token_file.chmod(0o644)
    assert cli.main(argv) == 0
    assert "planted-token" not in (paths.clients_dir / "vscode.mcp.json").read_text()
    assert mode_of(token_file) == 0o600 and token_file.read_text().strip() != "planted-token"
    capsys.readouterr()


@pytest.fixture
def http_token(seeded: tuple[ProjectPaths, Seeded], capsys: pytest.CaptureFixture[str]) -> str:
    paths, _ = seeded
    argv = ["connect", "--root", str(paths.root), "--client", "cursor", "--transport", "http"]
    assert cli.main(argv) == 0
    capsys.readouterr()
    return client_configs.token_file(paths).read_text().strip()


async def reaches(url: str, token: str) -> bool:
    """Whether an MCP handshake with `token` succeeds."""
    async with httpx2.AsyncClient(timeout=WAIT_S) as http:
        session = RawHttpSession(http, url, token)
        try:
            await session.initialize()
        except httpx2.HTTPStatusError:
            return False
        return True


@pytest.mark.slow
@pytest.mark.parametrize("how", ["--token-file", "RALPH_DESK_TOKEN"])
def test_the_http_server_takes_its_token_from_a_file_or_the_environment_not_its_command_line(
    seeded: tuple[ProjectPaths, Seeded], http_token: str, how: str
) -> None:
    paths, _ = seeded
    env = dict(os.environ)
    extra: tuple[str, ...] = ()
    if how == "--token-file":
        extra = ("--token-file", str(client_configs.token_file(paths)))
    else:
        env[client_configs.TOKEN_ENV] = http_token
    with http_process(paths, *extra, env=env) as (process, url, stderr):
        cmdline = Path(f"/proc/{process.pid}/cmdline").read_bytes()
        assert http_token.encode() not in cmdline
        assert asyncio.run(reaches(url, http_token))
        assert not asyncio.run(reaches(url, http_token + "x"))
    assert http_token not in stderr.text()  # a given token is not printed either
    server_logs = list(paths.logs_dir.glob("*_mcp.log"))
    assert server_logs and all(mode_of(log) == 0o600 for log in server_logs)


def test_a_token_file_others_may_read_is_refused_with_the_fix(
    seeded: tuple[ProjectPaths, Seeded], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths, _ = seeded
    shared = tmp_path / "token"
    shared.write_text("t0k3n\n")
    shared.chmod(0o644)
    argv = ["mcp", "--root", str(paths.root), "--transport", "http", "--token-file", str(shared)]
    assert cli.main(argv) == 2
    error = capsys.readouterr().err
    assert str(shared) in error and "0644" in error and "chmod 600" in error


def test_a_database_password_reaches_the_stdio_server_in_its_environment_not_its_command_line(
    seeded: tuple[ProjectPaths, Seeded], capsys: pytest.CaptureFixture[str]
) -> None:
    paths, _ = seeded
    url = "postgresql+psycopg://ralph:pw-5e1d9c@db.example.invalid/harbour"
    for client in client_configs.CLIENTS:
        argv = ["connect", "--root", str(paths.root), "--client", client, "--db-url", url]
        assert cli.main(argv) == 0
        written = paths.clients_dir / client_configs.render(client, client_configs.http_launch()).file_name
        text = written.read_text()
        assert text.count("pw-5e1d9c") == 1 and mode_of(written) == 0o600, client  # once: in the env
        assert "--db-url" not in text, client
    document = json.loads((paths.clients_dir / "claude.mcp.json").read_text())["mcpServers"]["ralph"]
    assert document["env"] == {"RALPH_DB_URL": url}
    codex = tomllib.loads((paths.clients_dir / "codex.config.toml").read_text())["mcp_servers"]["ralph"]
    assert codex["env"] == {"RALPH_DB_URL": url}
    assert "pw-5e1d9c" not in " ".join(document["args"])
    assert cli.main(["connect", "--root", str(paths.root), "--client", "claude", "--transport", "http",
                     "--db-url", url]) == 0  # fmt: skip
    hint = capsys.readouterr().err
    assert "start the server with: RALPH_DB_URL=<the database URL> ralph-desk mcp" in hint
    assert "pw-5e1d9c" not in hint
