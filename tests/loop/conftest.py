"""Fixtures for loop tests: agents (the stand-in everywhere, the real Claude Code CLI when installed) that
take their turns from the scripted model API."""

from __future__ import annotations

import asyncio
import shlex
import subprocess
import sys
from collections.abc import Callable, Coroutine, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from ralph_desk.loop.build import RunOptions, build_runner
from ralph_desk.loop.model import LiveEvent, LoopSettings
from ralph_desk.loop.runner import LoopRunner, LoopStatus
from ralph_desk.mcp_server.embedded import EmbeddedMcp
from ralph_desk.project import init_project, update_config
from ralph_desk.services.container import Services
from tests.support import stand_in_agent
from tests.support.fake_model_api import FakeModelApi, Text, ToolCalls, Turn
from tests.support.git_repo import commit_all
from tests.support.npm_tools import claude_bin

LOOP_TIMEOUT_S = 240

StartApi = Callable[..., FakeModelApi]
RunnerHook = Callable[[LoopRunner], Coroutine[Any, Any, None]]


def verb(name: str, **arguments: Any) -> tuple[str, dict[str, Any]]:
    """A scripted call of one of ralph's tools, as Claude names it."""
    return (f"mcp__ralph__{name}", arguments)


def heading(task_id: int) -> str:
    """The marker that only task `task_id`'s own prompt carries (its heading), to key its script."""
    return f"# Task #{task_id}: "


def session(*calls: tuple[str, dict[str, Any]]) -> list[Turn]:
    """One agent session: the tool calls in one turn, then a closing text turn."""
    return [ToolCalls(list(calls)), Text("Session over.")]


STAND_IN_WORDS = (sys.executable, "-I", stand_in_agent.__file__, "{prompt_file}", "{mcp_config}")
STAND_IN_COMMAND = shlex.join(STAND_IN_WORDS)


@dataclass(frozen=True)
class Agent:
    """An agent the loop tests run: as loop settings, as `ralph-desk run` arguments, as project config."""

    name: str
    settings: LoopSettings
    cli: tuple[str, ...]
    config: dict[str, Any]  # the config.json keys that choose it


def stand_in() -> Agent:
    """The binary-free stand-in agent, run by the `command` agent template."""
    return Agent(
        "stand-in",
        LoopSettings(agent="command", agent_command=STAND_IN_COMMAND),
        ("--agent", "command", "--agent-command", STAND_IN_COMMAND),
        {"agent": "command", "agent_command": list(STAND_IN_WORDS)},
    )


def real_claude(binary: Path) -> Agent:
    """The real Claude Code CLI."""
    return Agent(
        "claude",
        LoopSettings(agent="claude", agent_bin=str(binary)),
        ("--claude-bin", str(binary)),
        {"agent": "claude", "agent_bin": str(binary)},
    )


def use_agent(services: Services, agent: Agent) -> None:
    """Make `agent` the one the project's config (and so a loop started from a tool) runs."""
    update_config(services.paths, **agent.config)


def installed_agents() -> list[Agent]:
    """The stand-in on every machine, the real Claude Code on top where tools/npm has it."""
    binary = claude_bin()
    return [stand_in()] if binary is None else [stand_in(), real_claude(binary)]


@pytest.fixture(params=installed_agents(), ids=lambda agent: agent.name)
def agent(request: pytest.FixtureRequest) -> Agent:
    """Each installed agent in turn (so no loop test is skipped where Claude Code is missing)."""
    chosen: Agent = request.param
    return chosen


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Services]:
    """A git repository with a project: feature `core`, disciplines `backend` and `docs` (no `learned`)."""
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / "README.md").write_text("# repo\n")
    paths = init_project(root, title="Loop e2e")
    # These tests are about the loop: `done` merges at once (the review gate has tests of its own).
    update_config(paths, review_gate=False)
    commit_all(root, "start")
    services = Services.open(paths)
    services.features.create("core", "Core")
    services.disciplines.create("backend", "Backend", "server", "#336699")
    services.disciplines.create("docs", "Docs", "book", "#996633", disabled_tools=["learned"])
    yield services
    services.close()


@pytest.fixture
def start_api(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[StartApi]:
    """Start the scripted model API (scripts keyed by marker) and point the agents' environment at it."""
    started: list[FakeModelApi] = []

    def start(script: Sequence[Turn] = (), **scripts: Sequence[Turn]) -> FakeModelApi:
        api = FakeModelApi(script, sessions=dict(scripts)).start()
        started.append(api)
        home = tmp_path / "home"
        home.mkdir(exist_ok=True)
        for key, value in {**api.env(), "HOME": str(home), "CLAUDE_CODE_MAX_RETRIES": "0"}.items():
            monkeypatch.setenv(key, value)
        return api

    yield start
    for api in started:
        api.stop()


def settings(agent: Agent, **changes: Any) -> LoopSettings:
    """Loop settings for tests: the agent, short limits."""
    base = replace(agent.settings, max_turns=8, session_timeout_s=120, rate_limit_wait_s=0.5)
    return replace(base, **changes)


def run_loop(
    services: Services,
    loop_settings: LoopSettings,
    events: list[LiveEvent] | None = None,
    runner_hook: RunnerHook | None = None,
    exit_when_idle: bool = True,
) -> LoopStatus:
    """Run the loop with the embedded MCP server until nothing is runnable (or a limit, or a stop)."""

    async def main() -> LoopStatus:
        embedded = EmbeddedMcp(services)
        await embedded.start()
        runner = build_runner(services, embedded, loop_settings, RunOptions(exit_when_idle=exit_when_idle))
        if events is not None:
            runner.subscribe(events.append)
        hook = asyncio.create_task(runner_hook(runner)) if runner_hook is not None else None
        try:
            status = await asyncio.wait_for(runner.run(), LOOP_TIMEOUT_S)
            if hook is not None:
                await asyncio.wait_for(hook, LOOP_TIMEOUT_S)
            return status
        finally:
            if hook is not None and not hook.done():
                hook.cancel()
            await embedded.stop()

    return asyncio.run(main())
