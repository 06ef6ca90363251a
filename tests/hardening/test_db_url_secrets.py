"""A database password never on a command line, in a config, a message or a log.

Every local user can read a process's command line (`/proc/PID/cmdline`). A PostgreSQL URL with its
password goes in `$RALPH_DB_URL` or in a file only its owner may read (`--db-url-file`, `migrate
--to-file`), or the URL carries no password and libpq finds it (`PGPASSWORD`, `~/.pgpass`). The cases
that reach a server use the PostgreSQL test server (`RALPH_DESK_TEST_POSTGRES_URL`, `.ci/postgres`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from ralph_desk.project import ProjectPaths, init_project
from tests.hardening.support import INIT_PARAMS
from tests.postgres import server
from tests.support.cli import ralph_desk_process
from tests.support.jsonrpc import tool_call
from tests.support.stdio_wire import StdioWire

PASSWORD = "s3cret-Pw-9f2c"
pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/PID/cmdline")


def ralph_desk(
    *argv: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """`ralph-desk ARGV` as a process, with no database URL from the test's environment."""
    environment = {
        key: value for key, value in os.environ.items() if key not in ("RALPH_DB_URL", "PGPASSWORD")
    }
    return ralph_desk_process(*argv, env={**environment, **(env or {})}, timeout=timeout)


def private_file(path: Path, text: str, mode: int = 0o600) -> Path:
    path.write_text(text + "\n", encoding="utf-8")
    path.chmod(mode)
    return path


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A new, empty database on the PostgreSQL test server, owned by a user of its own whose password
    is `PASSWORD` (the server's own user's is a word found everywhere: `ralph`)."""
    if server.admin_url() is None:
        pytest.skip(f"set {server.ADMIN_URL_ENV} to reach a PostgreSQL server (.ci/postgres starts one)")
    url = server.create_database()
    role = f"{make_url(url).database}_owner"
    server.run_as_admin(f"CREATE ROLE \"{role}\" LOGIN PASSWORD '{PASSWORD}'")
    server.run_as_admin(f'ALTER DATABASE "{make_url(url).database}" OWNER TO "{role}"')
    try:
        yield make_url(url).set(username=role, password=PASSWORD).render_as_string(hide_password=False)
    finally:
        server.drop_database(url)
        server.run_as_admin(f'DROP ROLE IF EXISTS "{role}"')


def without_password(url: str) -> str:
    parsed = make_url(url)
    return f"{parsed.drivername}://{parsed.username}@{parsed.host}:{parsed.port}/{parsed.database}"


def password_of(url: str) -> str:
    password = make_url(url).password
    assert password, f"the test server's URL holds no password: {url}"
    return str(password)


def test_a_url_from_an_owner_only_file_keeps_the_password_off_every_command_line(
    tmp_path: Path, pg_url: str
) -> None:
    secret = password_of(pg_url)
    url_file = private_file(tmp_path / "db-url", pg_url)
    root = tmp_path / "harbour"
    root.mkdir()
    initialised = ralph_desk("init", str(root), "--db-url-file", str(url_file))
    assert initialised.returncode == 0, initialised.stderr
    wire = StdioWire(
        [sys.executable, "-m", "ralph_desk", "mcp", "--db-url-file", str(url_file), "--root", str(root)]
    )
    try:
        wire.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT_PARAMS})
        assert "result" in wire.answer(0, timeout=120)
        wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        wire.send(tool_call(1, "create_task", {"feature": "core", "discipline": "backend", "title": "On PG"}))
        wire.answer(1, timeout=120)
        cmdline = Path(f"/proc/{wire.process.pid}/cmdline").read_bytes()
        assert secret.encode() not in cmdline and str(url_file).encode() in cmdline
        assert wire.close() == 0
    finally:
        wire.kill()
    # The client config `connect` writes names the file: no password in it, its arguments or its output.
    connected = ralph_desk(
        "connect", "--client", "claude", "--root", str(root), "--db-url-file", str(url_file)
    )
    assert connected.returncode == 0, connected.stderr
    config = json.loads(connected.stdout)["mcpServers"]["ralph"]
    assert "--db-url-file" in config["args"] and str(url_file) in config["args"]
    assert secret not in connected.stdout + connected.stderr and "RALPH_DB_URL" not in json.dumps(config)
    for written in (ProjectPaths.at(root).ralph / "mcp" / "clients").iterdir():
        assert secret not in written.read_text(encoding="utf-8")
    for log in ProjectPaths.at(root).logs_dir.glob("*"):
        assert secret not in log.read_text(encoding="utf-8", errors="replace"), log.name


def test_a_url_file_others_may_read_is_refused_naming_the_fix(tmp_path: Path) -> None:
    url_file = private_file(
        tmp_path / "db-url", f"postgresql+psycopg://ralph:{PASSWORD}@127.0.0.1:9/x", 0o644
    )
    paths = init_project(tmp_path / "harbour", title="Harbour")
    refused = ralph_desk("status", "--root", str(paths.root), "--db-url-file", str(url_file))
    assert refused.returncode == 2
    assert "mode 0644 lets others read the database URL" in refused.stderr and "chmod 600" in refused.stderr
    assert PASSWORD not in refused.stderr + refused.stdout
    both = ralph_desk("status", "--root", str(paths.root), "--db-url-file", str(url_file), "--db-url", "x")
    assert both.returncode == 2 and "not both" in both.stderr


def test_a_url_file_that_is_a_fifo_a_device_or_too_big_is_refused_before_it_is_read(tmp_path: Path) -> None:
    paths = init_project(tmp_path / "harbour", title="Harbour")
    fifo = tmp_path / "db-url-fifo"
    os.mkfifo(fifo, 0o600)  # nobody writes it: reading would wait for ever
    big = private_file(
        tmp_path / "db-url-big", f"postgresql+psycopg://ralph:{PASSWORD}@h/x?" + "a" * 1_000_000
    )
    for given, said in ((fifo, "is a FIFO"), (Path("/dev/zero"), "is a device"), (big, "is over 4096 bytes")):
        refused = ralph_desk("status", "--root", str(paths.root), "--db-url-file", str(given), timeout=60)
        assert refused.returncode == 2, refused.stderr
        assert f"{given}: {said}" in refused.stderr and "allowed:" in refused.stderr, refused.stderr
        assert PASSWORD not in refused.stdout + refused.stderr


@pytest.mark.parametrize("command", ["status", "migrate"])
def test_a_url_file_whose_line_is_not_a_url_is_refused_without_showing_the_line(
    tmp_path: Path, command: str
) -> None:
    paths = init_project(tmp_path / "harbour", title="Harbour")
    url_file = private_file(tmp_path / "db-url", PASSWORD)  # the password alone, saved in the wrong file
    option = "--db-url-file" if command == "status" else "--to-file"
    refused = ralph_desk(command, "--root", str(paths.root), option, str(url_file))
    assert refused.returncode == 2, refused.stderr
    assert f"{url_file}: its line is not a database URL" in refused.stderr, refused.stderr
    assert "postgresql+psycopg://" in refused.stderr  # what is allowed
    assert PASSWORD not in refused.stdout + refused.stderr


def test_libpq_finds_the_password_when_the_url_has_none(tmp_path: Path, pg_url: str) -> None:
    bare = without_password(pg_url)
    paths = init_project(tmp_path / "harbour", title="Harbour", db_url=pg_url)
    by_variable = ralph_desk(
        "status", "--root", str(paths.root), "--db-url", bare, env={"PGPASSWORD": password_of(pg_url)}
    )
    assert by_variable.returncode == 0, by_variable.stderr
    assert "Harbour" in by_variable.stdout and "password" not in by_variable.stderr
    home = tmp_path / "home"
    home.mkdir()
    parsed = make_url(pg_url)
    private_file(home / ".pgpass", f"{parsed.host}:{parsed.port}:*:{parsed.username}:{parsed.password}")
    by_file = ralph_desk("status", "--root", str(paths.root), "--db-url", bare, env={"HOME": str(home)})
    assert by_file.returncode == 0, by_file.stderr
    # Without either, libpq's refusal is the message, with no password to hide.
    refused = ralph_desk("status", "--root", str(paths.root), "--db-url", bare, env={"HOME": str(tmp_path)})
    assert refused.returncode != 0 and "password" in refused.stderr.lower()


def test_migrate_takes_its_target_from_a_file_and_never_suggests_a_password_in_an_argument(
    tmp_path: Path, pg_url: str
) -> None:
    secret = password_of(pg_url)
    paths = init_project(tmp_path / "harbour", title="Harbour")
    target_file = private_file(tmp_path / "target", pg_url)
    moved = ralph_desk("migrate", "--root", str(paths.root), "--to-file", str(target_file))
    assert moved.returncode == 0, moved.stderr
    assert secret not in moved.stdout + moved.stderr
    assert "Use it with --db-url-file" in moved.stdout
    status = ralph_desk("status", "--root", str(paths.root), env={"RALPH_DB_URL": pg_url})
    assert status.returncode == 0 and "Harbour" in status.stdout, status.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["status", "--db-url", f"postgresql+nosuchdriver://ralph:{PASSWORD}@db.invalid/x"],
        ["status", "--db-url", f"postgresql+psycopg://ralph:{PASSWORD}@[::1/x"],
        ["status", "--db-url", f"postgresql+psycopg://ralph@127.0.0.1:9/x?password={PASSWORD}"],
        ["migrate", "--to", f"bogus://ralph:{PASSWORD}@db.invalid/x"],
        ["migrate", "--to", f"postgresql+nosuchdriver://ralph:{PASSWORD}@db.invalid/x"],
    ],
    ids=["unknown driver", "malformed host", "password parameter", "unknown scheme", "migrate driver"],
)
def test_a_password_given_on_the_command_line_is_warned_about_and_masked_in_every_message(
    tmp_path: Path, argv: list[str]
) -> None:
    paths = init_project(tmp_path / "harbour", title="Harbour")
    failed = ralph_desk(*argv, "--root", str(paths.root), env={"RALPH_DEBUG": "1"})
    assert failed.returncode != 0
    assert PASSWORD not in failed.stdout + failed.stderr, failed.stderr
    assert "visible to every local user" in failed.stderr, failed.stderr
