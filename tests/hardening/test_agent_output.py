"""An agent's output cannot kill the loop, and the agent never outlives its session.

A real loop (`LoopRunner` with the embedded MCP host) runs a real agent process: the command agent,
a Python script that writes 20 MB lines on stdout and stderr.
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ralph_desk.domain.enums import TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.loop.build import RunOptions, build_runner
from ralph_desk.loop.model import LiveEvent, LoopSettings
from ralph_desk.mcp_server.embedded import EmbeddedMcp
from ralph_desk.project import ProjectPaths
from ralph_desk.services.container import Services
from tests.hardening.support import Seeded

TWENTY_MB = 20 * 1024 * 1024
AGENT = f"""
import json, os, sys
big = b"x" * {TWENTY_MB}
sys.stdout.buffer.write(big + b"\\n"); sys.stdout.flush()
sys.stderr.buffer.write(big + b"\\n"); sys.stderr.flush()
print(json.dumps({{"agent_pid": os.getpid()}}), flush=True)
if sys.argv[2] == "hang":
    read_end, _ = os.pipe()
    os.read(read_end, 1)  # never answered: the agent works on until it is ended
print("after the long lines", flush=True)
"""


@pytest.fixture
def services(seeded: tuple[ProjectPaths, Seeded], tmp_path: Path) -> Iterator[Services]:
    paths, ids = seeded
    git = ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q"], cwd=paths.root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=paths.root, check=True)
    subprocess.run([*git, "commit", "-qm", "start"], cwd=paths.root, check=True)
    opened = Services.open(paths)
    for task in opened.tasks.list():
        if task.id != ids.parser:
            opened.tasks.move(task.id, TaskStatus.SKIPPED.value, Mover.IMPORT)
    yield opened
    opened.close()


def settings_for(tmp_path: Path, mode: str) -> LoopSettings:
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    template = shlex.join([sys.executable, str(script)]) + " {prompt_file} " + mode
    # Unconfined: the agent reports its process id, which in a sandbox is its namespace's own (the
    # confined agent's end is held by tests/loop/test_ide_stdio.py, which reads the command lines).
    return LoopSettings(
        agent="command", agent_command=template, max_iterations=1, session_timeout_s=300, sandbox=False
    )


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_twenty_megabyte_lines_are_cut_with_a_note_and_the_session_goes_on(
    services: Services, tmp_path: Path
) -> None:
    pids: list[int] = []

    def watch(event: LiveEvent) -> None:
        pids.extend(int(found) for found in re.findall(r'"agent_pid": (\d+)', event.text))

    async def main() -> None:
        embedded = EmbeddedMcp(services)
        await embedded.start()
        try:
            runner = build_runner(
                services, embedded, settings_for(tmp_path, "finish"), RunOptions(exit_when_idle=True)
            )
            runner.subscribe(watch)
            await asyncio.wait_for(runner.run(), 280)
        finally:
            await embedded.stop()

    asyncio.run(main())
    (session,) = services.sessions.list()
    assert session.ended_at is not None
    logs = services.paths.logs_dir.glob("*.log")
    (log,) = [path for path in logs if b"after the long lines" in path.read_bytes()]
    text = log.read_bytes()
    assert text.count(b"[ralph-desk: cut ") == 2 and len(text) < 3 * 16 * 1024 * 1024 + 100_000
    assert pids and not alive(pids[0])


def test_an_agent_never_outlives_its_session_when_the_loop_is_cancelled(
    services: Services, tmp_path: Path
) -> None:
    pids: list[int] = []

    async def main() -> None:
        embedded = EmbeddedMcp(services)
        await embedded.start()
        try:
            runner = build_runner(
                services, embedded, settings_for(tmp_path, "hang"), RunOptions(exit_when_idle=True)
            )
            running = asyncio.get_running_loop().create_task(runner.run())
            seen = asyncio.Event()

            def watch(event: LiveEvent) -> None:
                found = re.findall(r'"agent_pid": (\d+)', event.text)
                if found:
                    pids.append(int(found[0]))
                    seen.set()

            runner.subscribe(watch)
            await asyncio.wait_for(seen.wait(), 240)
            running.cancel()
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(running, 60)
        finally:
            await embedded.stop()

    asyncio.run(main())
    assert pids and not alive(pids[0]), "the agent works on after its session was cancelled"
