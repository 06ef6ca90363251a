"""config.json reaches the running loop: the agent's program, its turn limit, the rate-limit wait."""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

from ralph_desk.domain.enums import LoopState
from ralph_desk.loop.model import EventKind, LiveEvent
from ralph_desk.loop.runner import LoopRunner
from ralph_desk.loop.settings import load_settings
from ralph_desk.project import update_config
from ralph_desk.services.container import Services
from tests.loop.conftest import run_loop

# What Claude Code prints when the API refused it with 429 and named no reset time.
RATE_LIMITED = {
    "type": "result",
    "subtype": "error_during_execution",
    "is_error": True,
    "api_error_status": 429,
    "result": "API Error: 429 Too Many Requests",
    "total_cost_usd": 0,
    "num_turns": 1,
}


def fake_claude(folder: Path) -> Path:  # it writes beside itself, outside the project: run unconfined
    """A tiny program standing in for Claude Code: it notes its arguments and reports a rate limit."""
    program = folder / "my-claude"
    program.write_text(
        f"#!{sys.executable}\n"
        "import json, pathlib, sys\n"
        "pathlib.Path(sys.argv[0]).with_suffix('.argv').write_text(json.dumps(sys.argv[1:]))\n"
        f"print(json.dumps({RATE_LIMITED!r}), flush=True)\n",
        encoding="utf-8",
    )
    program.chmod(0o755)
    return program


def run_until_rate_limited(project: Services) -> tuple[float, list[LiveEvent]]:
    """Run the loop on the project's config until it waits out a rate limit; the wait it chose, in seconds."""
    events: list[LiveEvent] = []
    waits: list[float] = []

    async def stop_when_waiting(runner: LoopRunner) -> None:
        limited = asyncio.Event()

        def watch(event: LiveEvent) -> None:
            if event.kind is EventKind.LOOP_STATE and event.text == LoopState.RATE_LIMITED.value:
                limited.set()

        runner.subscribe(watch)
        await asyncio.wait_for(limited.wait(), 60)
        resumes_at = runner.status.resumes_at
        assert resumes_at is not None
        waits.append((resumes_at - datetime.now(UTC)).total_seconds())
        runner.stop()

    run_loop(project, load_settings(project.paths), events, runner_hook=stop_when_waiting)
    return waits[0], events


def test_the_configured_program_is_the_one_started_with_the_configured_turn_limit(
    project: Services, tmp_path: Path
) -> None:
    program = fake_claude(tmp_path)
    project.tasks.create("core", "backend", "Busy API")
    update_config(project.paths, agent="claude", agent_bin=str(program), max_turns=7, sandbox=False)

    run_until_rate_limited(project)

    argv = json.loads(program.with_suffix(".argv").read_text(encoding="utf-8"))
    assert argv[argv.index("--max-turns") + 1] == "7"


def test_the_loop_waits_the_configured_seconds_on_a_rate_limit_without_a_reset_time(
    project: Services, tmp_path: Path
) -> None:
    project.tasks.create("core", "backend", "Busy API")
    update_config(
        project.paths,
        agent="claude",
        agent_bin=str(fake_claude(tmp_path)),
        rate_limit_wait_s=42.5,
        sandbox=False,
    )

    wait, _ = run_until_rate_limited(project)

    assert 40 < wait <= 42.5


def test_the_default_rate_limit_wait_is_the_configs(project: Services, tmp_path: Path) -> None:
    project.tasks.create("core", "backend", "Busy API")
    update_config(project.paths, agent="claude", agent_bin=str(fake_claude(tmp_path)), sandbox=False)

    wait, _ = run_until_rate_limited(project)

    assert 57 < wait <= 60
