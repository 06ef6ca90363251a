"""Agents in a sandbox (DESIGN §15), end to end with the real loop and a hostile command-template agent:
confined by default, it writes its own worktree and nothing else; with the sandbox off the same moves
succeed, so the sandbox is what stops them."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.loop.confine import sandbox_name
from ralph_desk.project import update_config
from ralph_desk.sandbox import availability
from ralph_desk.services.container import Services
from tests.loop.conftest import Agent, StartApi, heading, run_loop, session, settings, stand_in, verb
from tests.loop.test_review_e2e import edit
from tests.support import hostile_attempts, stand_in_agent
from tests.support.fake_model_api import ToolCalls
from tests.support.git_repo import git

needs_sandbox = pytest.mark.skipif(
    not availability().confines, reason=f"no sandbox here: {availability().reason}"
)
ATTACKS = ("bashrc", "ssh_key", "checkout", "other_worktree", "git_config", "git_hooks")


def _hostile_command() -> str:
    words = [
        sys.executable,
        hostile_attempts.__file__,
        stand_in_agent.__file__,
        "{prompt_file}",
        "{mcp_config}",
    ]
    return shlex.join(words)


def _attack(
    project: Services, start_api: StartApi, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, sandbox: bool
) -> tuple[dict[str, str], dict[str, Path], str]:
    """Run the hostile agent on a task in review-gated git project; what it said, its targets, its branch."""
    root = project.paths.root
    update_config(project.paths, review_gate=True)
    task = project.tasks.create("core", "backend", "Do my task")  # first: the one session runs it
    other = project.tasks.create("core", "backend", "Someone else's work")
    other_worktree = project.workspaces.prepare(other.id, other.title)
    assert other_worktree is not None
    start_api(**{heading(task.id): session(verb("done", summary="done as asked"))})
    home = Path(os.environ["HOME"])  # the start_api fixture gave the agent this home
    (home / ".ssh").mkdir(exist_ok=True)
    (home / ".ssh" / "id_rsa").write_text("PRIVATE KEY\n")
    (home / ".bashrc").write_text("# the person's\n")
    targets = {
        "bashrc": home / ".bashrc",
        "ssh_key": home / ".ssh" / "id_rsa",
        "checkout": root / "planted.txt",
        "other_worktree": other_worktree.path / "planted.txt",
        "git_config": root / ".git" / "config",
        "git_hooks": root / ".git" / "hooks" / "post-checkout",
        "own_file": Path("mine.txt"),
    }
    monkeypatch.setenv(hostile_attempts.TARGETS_ENV, json.dumps({k: str(v) for k, v in targets.items()}))

    run_loop(
        project, settings(stand_in(), agent_command=_hostile_command(), sandbox=sandbox, max_iterations=1)
    )

    assert project.tasks.get(task.id).status is TaskStatus.IN_REVIEW
    worktree = project.workspaces.existing(task.id)
    assert worktree is not None
    said = json.loads(git(root, "show", f"refs/heads/{worktree.branch}:attempts.json"))
    assert git(root, "show", f"refs/heads/{worktree.branch}:mine.txt") == "my work"
    return said, targets, worktree.branch


@needs_sandbox
def test_a_confined_agent_writes_its_worktree_and_nothing_else(
    project: Services, start_api: StartApi, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    said, targets, _ = _attack(project, start_api, monkeypatch, tmp_path, sandbox=True)

    assert said["own_file"] == "ok"
    refused = {name: said[name] for name in ATTACKS if said[name] != "ok"}
    assert sorted(refused) == sorted(ATTACKS), said
    assert targets["bashrc"].read_text() == "# the person's\n"
    assert not targets["checkout"].exists() and not targets["other_worktree"].exists()
    assert "fsmonitor" not in targets["git_config"].read_text()
    assert not targets["git_hooks"].exists()
    (recorded,) = [row for row in project.sessions.list() if row.sandbox is not None]
    assert recorded.confined and recorded.sandbox == "bubblewrap"
    assert "writes its worktree" in (recorded.sandbox_note or "")


def test_the_same_agent_unconfined_does_all_of_it(
    project: Services, start_api: StartApi, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    said, targets, _ = _attack(project, start_api, monkeypatch, tmp_path, sandbox=False)

    assert {name: said[name] for name in (*ATTACKS, "own_file")} == dict.fromkeys(
        (*ATTACKS, "own_file"), "ok"
    )
    assert "curl evil" in targets["bashrc"].read_text()
    assert targets["checkout"].exists() and targets["other_worktree"].exists()
    assert "fsmonitor" in targets["git_config"].read_text() and targets["git_hooks"].exists()
    (recorded,) = project.sessions.list()
    assert not recorded.confined and recorded.sandbox_note == "unconfined: the sandbox setting is off"


@needs_sandbox
def test_an_agent_confined_by_default_edits_in_its_worktree_and_the_edit_reaches_review(
    agent: Agent, project: Services, start_api: StartApi
) -> None:
    root = project.paths.root
    (root / "tide.py").write_text("HIGH = 1\n")
    git(root, "add", "tide.py")
    git(root, "commit", "-qm", "tide constants")
    update_config(project.paths, review_gate=True)
    task = project.tasks.create("core", "backend", "Raise high water")
    worktree = project.workspaces.prepare(task.id, task.title)
    assert worktree is not None
    start_api(**{heading(task.id): edit(worktree.path / "tide.py", "HIGH = 1\n", "HIGH = 2\n", "raised")})

    run_loop(project, settings(agent, max_iterations=1))  # the settings' own default: confined

    assert project.tasks.get(task.id).status is TaskStatus.IN_REVIEW
    assert git(root, "show", f"refs/heads/{worktree.branch}:tide.py") == "HIGH = 2"
    assert (root / "tide.py").read_text() == "HIGH = 1\n"  # the person's checkout is untouched
    (recorded,) = project.sessions.list(task_id=task.id)
    assert recorded.confined and recorded.sandbox == "bubblewrap", recorded.sandbox_note
    assert not (project.paths.sandbox_dir / sandbox_name(recorded.id)).exists()  # its private home went


@needs_sandbox
def test_claude_codes_own_sandbox_is_on_inside_the_sessions_and_its_bash_still_works(
    agent: Agent, project: Services, start_api: StartApi
) -> None:
    if agent.name != "claude":
        pytest.skip("the stand-in has no Bash tool of its own")
    root = project.paths.root
    update_config(project.paths, review_gate=True)
    task = project.tasks.create("core", "backend", "Make it with Bash")
    command = "echo made-by-bash > bash.txt"
    start_api(
        **{
            heading(task.id): [
                ToolCalls([("Bash", {"command": command})]),
                *session(verb("done", summary="made")),
            ]
        }
    )

    run_loop(project, settings(agent, max_iterations=1))

    worktree = project.workspaces.existing(task.id)
    assert worktree is not None
    assert git(root, "show", f"refs/heads/{worktree.branch}:bash.txt") == "made-by-bash"
    (recorded,) = project.sessions.list(task_id=task.id)
    transcript = Path(recorded.transcript_path or "").read_text()
    if shutil.which("socat"):  # Claude Code's sandbox needs it: with it, it starts (no warning) and runs Bash
        assert "Sandbox disabled" not in transcript and "failed to initialize" not in transcript


@needs_sandbox
def test_a_command_agent_without_network_reaches_the_desk_only_and_signals_through_its_relay(
    project: Services,
) -> None:
    import socket

    root = project.paths.root
    task = project.tasks.create("core", "backend", "Work offline")
    with socket.create_server(("127.0.0.1", 0)) as elsewhere:  # a server on this computer, not the desk's
        port = elsewhere.getsockname()[1]
        probe = f"import socket; socket.create_connection(('127.0.0.1', {port}), 2)"
        script = (
            f'{shlex.quote(sys.executable)} -c "{probe}" && echo reached > net.txt || echo refused > net.txt'
        )
        words = ["sh", "-c", f'{script}; exec "$0" "$@"', sys.executable, stand_in_agent.__file__]
        words += ["{prompt_file}", "{mcp_config}", "--call", 'done={"summary": "done without a network"}']
        offline = settings(
            stand_in(), agent_command=shlex.join(words), sandbox_network=False, max_iterations=1
        )

        run_loop(project, offline)

    assert project.tasks.get(task.id).status is TaskStatus.DONE  # its `done` reached the desk
    assert git(root, "show", "HEAD:net.txt") == "refused"
    (recorded,) = project.sessions.list(task_id=task.id)
    assert recorded.closing_verb == "done" and "no network" in (recorded.sandbox_note or "")
