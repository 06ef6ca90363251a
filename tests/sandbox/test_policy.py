"""The sandbox's policy, its command lines and what the person is told where there is none."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ralph_desk.project import ProjectPaths, init_project, read_config
from ralph_desk.project.config import command_fingerprint
from ralph_desk.project.confinement import SandboxRequest, confined, policy, sandbox_of
from ralph_desk.project.untrusted import config_commands
from ralph_desk.sandbox import availability, seatbelt
from ralph_desk.sandbox.availability import Availability
from ralph_desk.sandbox.exposure import needed, toolchains

needs_sandbox = pytest.mark.skipif(not availability().confines, reason="no sandbox on this computer")


@pytest.fixture
def paths(tmp_path: Path) -> ProjectPaths:
    root = tmp_path / "project"
    root.mkdir()
    return init_project(root, title="Confined")


def test_a_folder_that_turns_the_sandbox_off_is_asked_about_and_one_that_leaves_it_on_is_not(
    paths: ProjectPaths,
) -> None:
    config = read_config(paths)
    assert config.sandbox and ("sandbox", "false: sessions, checks and setup run as you, unconfined") not in (
        config_commands(config)
    )
    before = command_fingerprint(config)
    off = config.changed(sandbox=False)
    assert command_fingerprint(off) != before
    assert [setting for setting, _ in config_commands(off)] == ["sandbox"]


def test_without_bubblewrap_the_person_is_told_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH with no bwrap on it
    found = availability()
    assert (
        not found.confines and "bubblewrap" in found.reason and "apt-get install bubblewrap" in found.reason
    )
    state = sandbox_of(True, True, found)
    assert state.line().startswith("NOT confined: bubblewrap (`bwrap`) is not installed")
    assert (
        sandbox_of(False, True).line()
        == "NOT confined: the sandbox setting is off — agents, checks and setup run as you"
    )


def test_a_sandbox_the_computer_cannot_make_leaves_the_command_as_it_is_and_says_why(
    paths: ProjectPaths,
) -> None:
    missing = Availability(None, reason="no sandbox here")
    outcome = confined(paths, ["/bin/true"], SandboxRequest("x", paths.root), True, missing)
    assert (outcome.argv, outcome.confined, outcome.reason) == (["/bin/true"], False, "no sandbox here")


def test_the_policy_hides_the_home_masks_the_desks_credentials_and_protects_ralph_in_the_project_folder(
    paths: ProjectPaths, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    (home / ".pyenv" / "bin").mkdir(parents=True)
    (home / ".claude").mkdir()
    (home / ".claude" / ".credentials.json").write_text("{}")
    monkeypatch.setenv("HOME", str(home))
    from ralph_desk.project.confinement import HomeFile

    made = policy(paths, SandboxRequest("s", paths.root, home_files=(HomeFile(".claude/.credentials.json"),)))

    assert home in made.hidden and paths.root in made.readable and home / ".pyenv" in made.readable
    assert paths.mcp_dir in made.masked and paths.ralph in made.protected
    assert made.home.is_relative_to(paths.sandbox_dir) and made.home.is_dir()
    (binding,) = made.files
    assert binding.source == home / ".claude" / ".credentials.json" and not binding.writable
    assert binding.target == made.home / ".claude" / ".credentials.json"


def test_programs_installed_in_a_hidden_home_are_shown_by_their_install_folder_never_the_whole_home(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    tool = home / ".venvs" / "agent" / "bin" / "agent"
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\n")
    script = home / "agent.py"
    script.write_text("")
    shown = needed([str(tool), str(script)], [home])
    assert set(shown) == {home / ".venvs" / "agent", script}
    assert toolchains(home, f"{home / '.venvs' / 'agent' / 'bin'}:/usr/bin") == (home / ".venvs" / "agent",)


def test_the_macos_profile_keeps_the_same_order_as_the_linux_mounts(
    paths: ProjectPaths, tmp_path: Path
) -> None:
    made = policy(paths, SandboxRequest("s", paths.root, network=False))
    text = seatbelt.profile(made)
    lines = text.splitlines()
    hidden = next(i for i, line in enumerate(lines) if line.startswith("(deny file-read* file-write*"))
    shown = next(i for i, line in enumerate(lines) if line.startswith("(allow file-read* (subpath"))
    masked = next(i for i, line in enumerate(lines) if str(paths.mcp_dir) in line)
    assert hidden < shown < masked
    assert lines[-2:] == ["(deny network*)", '(allow network-outbound (remote ip "localhost:*"))']
    assert seatbelt.quoted(Path('/a "b"\\c')) == '"/a \\"b\\"\\\\c"'


@needs_sandbox
def test_a_confined_process_reads_the_project_but_not_the_desks_credentials_nor_another_sessions_home(
    paths: ProjectPaths,
) -> None:
    secret = paths.sessions_dir / "other-session.mcp.json"
    secret.write_text(json.dumps({"token": "s3cret"}))
    other = policy(paths, SandboxRequest("other", paths.root))
    (other.home / "note").write_text("theirs")
    outcome = confined(
        paths,
        [
            "/bin/sh",
            "-c",
            'cat "$1"; cat "$2"; cat "$3"',
            "sh",
            str(paths.config_file),
            str(secret),
            str(other.home / "note"),
        ],
        SandboxRequest("mine", paths.root),
        True,
    )

    done = subprocess.run(
        outcome.argv, env=outcome.environment({"PATH": "/usr/bin:/bin"}), capture_output=True, text=True
    )

    assert '"version"' in done.stdout  # the project's config: readable
    assert "s3cret" not in done.stdout and "theirs" not in done.stdout
    assert done.stderr.count("No such file or directory") == 2, done.stderr


@needs_sandbox
def test_without_network_a_confined_process_cannot_reach_a_server_on_this_computer(
    paths: ProjectPaths,
) -> None:
    import socket

    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        probe = ["python3", "-c", f"import socket; socket.create_connection(('127.0.0.1', {port}), 2)"]
        shared = confined(paths, probe, SandboxRequest("net", paths.root), True)
        cut = confined(paths, probe, SandboxRequest("nonet", paths.root, network=False), True)
        env = {"PATH": "/usr/bin:/bin"}
        assert subprocess.run(shared.argv, env=shared.environment(env), capture_output=True).returncode == 0
        refused = subprocess.run(cut.argv, env=cut.environment(env), capture_output=True, text=True)
    assert refused.returncode != 0 and "ConnectionRefusedError" in refused.stderr
