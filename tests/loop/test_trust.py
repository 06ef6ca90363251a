"""A program named by a cloned project's config.json runs only once the person allowed it (issue 14)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from ralph_desk.loop.settings import load_settings
from ralph_desk.project import ProjectError, ProjectPaths, read_config, update_config
from ralph_desk.project.trust import TRUST_FILE_ENV
from ralph_desk.services.container import Services
from tests.support.ide import call
from tests.support.stdio_wire import mcp_command

RUN_TIMEOUT_S = 180
MARKS = "import pathlib, sys; pathlib.Path(sys.argv[1]).write_text('ran')"


def ralph_desk(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ralph_desk", *args],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )


def cloned_command(paths: ProjectPaths, marker: Path) -> list[str]:
    """Write config.json as a cloned repository brings it (not through ralph-desk): a program that marks."""
    command = [sys.executable, "-c", MARKS, str(marker), "{prompt_file}"]
    raw = json.loads(paths.config_file.read_text(encoding="utf-8"))
    raw.update(agent="command", agent_command=command)
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

    refused = ralph_desk("run", "--root", root, "--max-iterations", "1")
    assert refused.returncode != 0
    assert str(marker) in refused.stderr and "ralph-desk trust" in refused.stderr, refused.stderr
    assert not marker.exists()

    allowed = ralph_desk("trust", "--root", root)
    assert allowed.returncode == 0, allowed.stderr
    assert str(marker) in allowed.stdout
    assert stat.S_IMODE(trust_file.stat().st_mode) == 0o600
    ran = ralph_desk("run", "--root", root, "--max-iterations", "1")
    assert "ralph-desk trust" not in ran.stderr, ran.stderr
    assert marker.read_text() == "ran"

    changed = tmp_path / "changed"
    cloned_command(project.paths, changed)  # as a `git pull` would change it
    again = ralph_desk("run", "--root", root, "--max-iterations", "1")
    assert again.returncode != 0
    assert str(changed) in again.stderr and "ralph-desk trust" in again.stderr, again.stderr
    assert not changed.exists()


def test_a_command_written_through_ralph_desk_is_trusted_but_saving_another_key_trusts_nothing(
    project: Services, tmp_path: Path, trust_file: Path
) -> None:
    root = str(project.paths.root)
    cloned_command(project.paths, tmp_path / "marker")
    update_config(project.paths, max_turns=9)  # the person saved another setting: the clone's command stays
    refused = ralph_desk("run", "--root", root, "--max-iterations", "1", "--dry-run")
    assert refused.returncode != 0 and "ralph-desk trust" in refused.stderr
    mine = [sys.executable, "-c", MARKS, str(tmp_path / "mine"), "{prompt_file}"]
    update_config(project.paths, agent_command=mine)  # the person named it
    assert read_config(project.paths).agent_command == tuple(mine)
    assert "ralph-desk trust" not in ralph_desk("run", "--root", root, "--dry-run").stderr


def test_trust_on_a_project_naming_no_program_records_nothing(project: Services, trust_file: Path) -> None:
    shown = ralph_desk("trust", "--root", str(project.paths.root))
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
    cloned_command(project.paths, tmp_path / "marker")
    trust_file.parent.mkdir(parents=True)
    trust_file.write_text("{broken", encoding="utf-8")
    with pytest.raises(ProjectError, match=f"{trust_file}: cannot read the trusted agent commands"):
        load_settings(project.paths)
    assert load_settings(project.paths, agent="rehearsal").agent == "rehearsal"  # nothing named runs
