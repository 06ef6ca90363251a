"""A program named by a cloned project's config.json runs only once the person allowed it (issue 14)."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from ralph_desk.loop.model import LoopSettings
from ralph_desk.loop.settings import RunOverrides, load_settings
from ralph_desk.loop.trust_check import (
    UntrustedCommandError,
    trust_config,
    untrusted_servers,
    untrusted_start,
)
from ralph_desk.project import ProjectError, ProjectPaths, read_config, trust, update_config
from ralph_desk.project.trust import TRUST_FILE_ENV
from ralph_desk.services.container import Services
from tests.loop.conftest import stand_in
from tests.support.cli import ralph_desk_process
from tests.support.ide import call
from tests.support.stdio_wire import mcp_command

RUN_TIMEOUT_S = 180
MARKS = "import pathlib, sys; pathlib.Path(sys.argv[1]).write_text('ran')"


def cloned_command(paths: ProjectPaths, marker: Path, unconfined: bool = True) -> list[str]:
    """Write config.json as a cloned repository brings it (not through ralph-desk): a program that marks —
    outside the project, so the clone also turns the sandbox off (asked about with the program)."""
    command = [sys.executable, "-c", MARKS, str(marker), "{prompt_file}"]
    raw = json.loads(paths.config_file.read_text(encoding="utf-8"))
    raw.update(agent="command", agent_command=command, sandbox=not unconfined)
    paths.config_file.write_text(json.dumps(raw), encoding="utf-8")
    return command


@pytest.fixture
def trust_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This test's own trust file (its subprocesses inherit it)."""
    path = tmp_path / "config" / "trusted-commands.json"
    monkeypatch.setenv(TRUST_FILE_ENV, str(path))
    return path


def test_run_refuses_a_cloned_command_until_trusted_and_again_once_it_changes(
    project: Services, tmp_path: Path, trust_file: Path
) -> None:
    project.tasks.create("core", "backend", "Chart the tides")
    root = str(project.paths.root)
    marker = tmp_path / "marker"
    cloned_command(project.paths, marker)

    refused = ralph_desk_process("run", "--root", root, "--max-iterations", "1")
    assert refused.returncode != 0
    assert str(marker) in refused.stderr and "ralph-desk trust" in refused.stderr, refused.stderr
    assert not marker.exists()

    allowed = ralph_desk_process("trust", "--root", root)
    assert allowed.returncode == 0, allowed.stderr
    assert str(marker) in allowed.stdout
    assert stat.S_IMODE(trust_file.stat().st_mode) == 0o600
    ran = ralph_desk_process("run", "--root", root, "--max-iterations", "1")
    assert "ralph-desk trust" not in ran.stderr, ran.stderr
    assert marker.read_text() == "ran"

    changed = tmp_path / "changed"
    cloned_command(project.paths, changed)  # as a `git pull` would change it
    again = ralph_desk_process("run", "--root", root, "--max-iterations", "1")
    assert again.returncode != 0
    assert str(changed) in again.stderr and "ralph-desk trust" in again.stderr, again.stderr
    assert not changed.exists()


def test_a_command_written_through_ralph_desk_is_trusted_but_saving_another_key_trusts_nothing(
    project: Services, tmp_path: Path, trust_file: Path
) -> None:
    root = str(project.paths.root)
    cloned_command(project.paths, tmp_path / "marker")
    update_config(project.paths, max_turns=9)  # the person saved another setting: the clone's command stays
    refused = ralph_desk_process("run", "--root", root, "--max-iterations", "1", "--dry-run")
    assert refused.returncode != 0 and "ralph-desk trust" in refused.stderr
    mine = [sys.executable, "-c", MARKS, str(tmp_path / "mine"), "{prompt_file}"]
    update_config(project.paths, agent_command=mine)  # the person named it
    assert read_config(project.paths).agent_command == tuple(mine)
    assert "ralph-desk trust" not in ralph_desk_process("run", "--root", root, "--dry-run").stderr


def test_trust_on_a_project_naming_no_program_records_nothing(project: Services, trust_file: Path) -> None:
    shown = ralph_desk_process("trust", "--root", str(project.paths.root))
    assert shown.returncode == 0, shown.stderr
    assert "nothing to trust" in shown.stdout
    assert not trust_file.exists()


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_ralph_run_over_stdio_refuses_a_cloned_command(
    project: Services, tmp_path: Path, trust_file: Path
) -> None:
    project.tasks.create("core", "backend", "Chart the tides")
    marker = tmp_path / "marker"
    cloned_command(project.paths, marker)
    params = StdioServerParameters(
        command=sys.executable, args=mcp_command(project.paths)[1:], env=dict(os.environ)
    )
    async with Client(params, mode="legacy") as client:
        refused = (await call(client, "ralph_run", {}))["error"]
        understand = (await call(client, "ralph_understand", {}))["error"]
    assert refused["code"] == "invalid_argument"
    assert refused["details"]["reason"] == "untrusted_command"
    assert str(marker) in refused["details"]["command"] and "ralph-desk trust" in refused["message"]
    assert understand["details"]["reason"] == "untrusted_command"
    assert not marker.exists()


def test_a_broken_trust_file_is_named_and_trusts_nothing(
    project: Services, tmp_path: Path, trust_file: Path
) -> None:
    cloned_command(project.paths, tmp_path / "marker", unconfined=False)  # the sandbox off would be asked
    trust_file.parent.mkdir(parents=True)
    trust_file.write_text("{broken", encoding="utf-8")
    with pytest.raises(ProjectError, match=f"{trust_file}: cannot read the trusted agent commands"):
        load_settings(project.paths)
    assert (
        load_settings(project.paths, RunOverrides(agent="rehearsal")).agent == "rehearsal"
    )  # nothing named runs


# A stdio MCP server that leaves a mark when started, then answers as little MCP as the stand-in asks.
MARKING_SERVER = """
import json, pathlib, sys
pathlib.Path(sys.argv[1]).write_text('ran')
for line in sys.stdin:
    message = json.loads(line)
    if 'id' not in message:
        continue
    method, params = message['method'], message.get('params', {})
    result = {'tools': []} if method == 'tools/list' else {}
    if method == 'initialize':
        result = {'protocolVersion': params['protocolVersion'], 'capabilities': {'tools': {}},
                  'serverInfo': {'name': 'marks', 'version': '1'}}
    print(json.dumps({'jsonrpc': '2.0', 'id': message['id'], 'result': result}), flush=True)
"""


def marking_server(marker: Path) -> dict[str, Any]:
    """A stdio server entry whose command marks `marker` when started (its script beside the marker)."""
    script = marker.with_suffix(".py")
    script.write_text(MARKING_SERVER, encoding="utf-8")
    return {"command": sys.executable, "args": [str(script), str(marker)]}


def cloned_server(
    paths: ProjectPaths, marker: Path, discipline: str = "backend", env: dict[str, str] | None = None
) -> str:
    """Write a discipline's stdio server into the database as a cloned repository brings it (raw SQL)."""
    servers = {"marks": {**marking_server(marker), **({"env": env} if env else {})}}
    with sqlite3.connect(paths.db_file) as connection:
        connection.execute(
            "UPDATE disciplines SET mcp_servers = ? WHERE name = ?", (json.dumps(servers), discipline)
        )
    connection.close()
    return str(marker)


@pytest.mark.sqlite_only  # a clone brings the SQLite file; the test writes it as one would
def test_run_refuses_a_server_command_the_cloned_database_names_until_trusted(
    project: Services, tmp_path: Path, trust_file: Path
) -> None:
    project.tasks.create("core", "backend", "Chart the tides")
    root = str(project.paths.root)
    marker = tmp_path / "marker"
    update_config(project.paths, sandbox=False)  # the server marks a file outside the project
    cloned_server(project.paths, marker)
    run = ("run", "--root", root, "--max-iterations", "1", *stand_in().cli)

    refused = ralph_desk_process(*run)
    assert refused.returncode != 0
    assert str(marker) in refused.stderr and "ralph-desk trust" in refused.stderr, refused.stderr
    assert "mcp_servers" in refused.stderr and str(project.paths.db_file) in refused.stderr
    assert not marker.exists()

    allowed = ralph_desk_process("trust", "--root", root)
    assert allowed.returncode == 0, allowed.stderr
    assert "mcp server:" in allowed.stdout and str(marker) in allowed.stdout
    ran = ralph_desk_process(*run)
    assert "ralph-desk trust" not in ran.stderr, ran.stderr
    assert marker.read_text() == "ran"  # the agent started the allowed server


@pytest.mark.sqlite_only  # the shared database here is a second SQLite file
def test_a_refusal_for_a_shared_database_server_names_that_database_not_the_folder(
    project: Services, tmp_path: Path, trust_file: Path
) -> None:
    project.tasks.create("core", "backend", "Chart the tides")
    shared_file = tmp_path / "shared" / "team.db"
    shared_file.parent.mkdir()
    with sqlite3.connect(project.paths.db_file) as source, sqlite3.connect(shared_file) as target:
        source.backup(target)
    source.close()
    target.close()
    marker = tmp_path / "marker"
    servers = {"marks": marking_server(marker)}
    with sqlite3.connect(shared_file) as connection:
        connection.execute(
            "UPDATE disciplines SET mcp_servers = ? WHERE name = 'backend'", (json.dumps(servers),)
        )
    connection.close()
    url = f"sqlite:///{shared_file}"

    refused = ralph_desk_process(
        "run", "--root", str(project.paths.root), "--db-url", url, "--max-iterations", "1", *stand_in().cli
    )

    assert refused.returncode != 0
    assert refused.stderr.startswith(f"ralph-desk: error: {url} names the programs to run"), refused.stderr
    assert "came with the shared database (not the project folder)" in refused.stderr
    assert str(project.paths.db_file) not in refused.stderr and ".ralph/db" not in refused.stderr
    assert not marker.exists()


@pytest.mark.sqlite_only  # a clone brings the SQLite file; the test writes it as one would
def test_a_server_added_through_ralph_desk_is_trusted_but_an_edit_leaves_a_cloned_one_untrusted(
    project: Services, tmp_path: Path, trust_file: Path
) -> None:
    dry_run = ("run", "--root", str(project.paths.root), "--dry-run", *stand_in().cli)
    mine = {"mine": marking_server(tmp_path / "mine")}
    project.disciplines.update("docs", mcp_servers=mine, display_name="Docs")
    shown = ralph_desk_process(*dry_run)
    assert shown.returncode == 0 and "ralph-desk trust" not in shown.stderr, shown.stderr

    cloned = cloned_server(project.paths, tmp_path / "cloned")
    other = {"other": marking_server(tmp_path / "other")}
    project.disciplines.update("docs", mcp_servers=other)  # the person edits another discipline's servers
    refused = ralph_desk_process(*dry_run)
    assert refused.returncode != 0
    assert cloned in refused.stderr and "ralph-desk trust" in refused.stderr, refused.stderr


@pytest.mark.sqlite_only  # a clone (or a `git pull`) brings the SQLite file; the test writes it as one would
def test_a_changed_env_value_of_an_allowed_server_is_asked_about_again_naming_bash_env(
    project: Services, tmp_path: Path, trust_file: Path
) -> None:
    dry_run = ("run", "--root", str(project.paths.root), "--dry-run", *stand_in().cli)
    secret = "tok-9f2c-never-shown"
    marker = tmp_path / "marker"
    cloned_server(project.paths, marker, env={"BASH_ENV": str(tmp_path / "plain.sh"), "API_TOKEN": secret})
    allowed = ralph_desk_process("trust", "--root", str(project.paths.root))
    assert allowed.returncode == 0, allowed.stderr
    assert "(env: API_TOKEN, BASH_ENV; BASH_ENV can make it run other code)" in allowed.stdout, allowed.stdout
    assert ralph_desk_process(*dry_run).returncode == 0

    hostile = str(tmp_path / "runs-anything.sh")
    cloned_server(project.paths, marker, env={"BASH_ENV": hostile, "API_TOKEN": secret})  # same names
    refused = ralph_desk_process(*dry_run)
    assert refused.returncode != 0 and "ralph-desk trust" in refused.stderr, refused.stderr
    assert "BASH_ENV can make it run other code" in refused.stderr, refused.stderr
    assert hostile not in refused.stderr and secret not in refused.stderr  # names only, never a value
    again = ralph_desk_process("trust", "--root", str(project.paths.root))
    assert again.returncode == 0 and ralph_desk_process(*dry_run).returncode == 0, again.stderr

    key_file = trust_file.with_suffix(".key")
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    key = key_file.read_text(encoding="ascii").strip()
    kept = trust_file.read_text(encoding="utf-8")
    assert secret not in kept and hostile not in kept and "plain.sh" not in kept and key not in kept
    for shown in (allowed, refused, again):
        assert key not in shown.stdout + shown.stderr and secret not in shown.stdout + shown.stderr


@pytest.mark.sqlite_only  # a clone brings the SQLite file; the test writes it as one would
def test_a_server_allowed_before_env_values_counted_is_asked_about_once_again(
    project: Services, tmp_path: Path, trust_file: Path
) -> None:
    cloned_server(project.paths, tmp_path / "marker", env={"ENV": "x"})
    spec = project.disciplines.get("backend").mcp_servers[0]
    # The record an earlier ralph-desk made: the command, args and env names only.
    names_only = [{"command": spec.command, "args": list(spec.args), "env": sorted(spec.env)}]
    trust.record(project.paths.root, trust.fingerprint({trust.SERVERS: names_only}), trust.SERVERS)

    found = untrusted_servers(project.paths, project.disciplines.list())
    assert found is not None and "ENV can make it run other code" in found.command


def test_a_start_names_the_checks_and_setup_a_clone_brought_and_runs_none_before_trust(
    project: Services, tmp_path: Path, trust_file: Path
) -> None:
    marker = tmp_path / "marker"
    check = {"name": "tests", "run": f"{sys.executable} -c \"open('{marker.as_posix()}', 'w')\""}
    raw = json.loads(project.paths.config_file.read_text(encoding="utf-8"))
    raw.update(checks=[check], setup="make deps")
    project.paths.config_file.write_text(json.dumps(raw), encoding="utf-8")
    config = read_config(project.paths)
    settings = LoopSettings.of(config)

    found = untrusted_start(project.paths, config, settings, project.disciplines.list())

    assert found is not None
    assert [(item.setting, item.command) for item in (found, *found.also)] == [
        ("checks", f"tests: {check['run']}"),
        ("setup", "make deps"),
    ]
    with pytest.raises(UntrustedCommandError, match="setup: make deps") as refused:
        load_settings(project.paths, RunOverrides(agent="rehearsal"))
    assert "ralph-desk trust" in str(refused.value) and check["run"] in str(refused.value)
    assert not marker.exists()
    trust_config(project.paths)
    assert untrusted_start(project.paths, config, settings, project.disciplines.list()) is None
    assert load_settings(project.paths).checks == config.checks
