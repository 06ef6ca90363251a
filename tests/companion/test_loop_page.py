"""The Loop page acts on the loop of the process serving it: pause, resume, stop (issue 25)."""

from __future__ import annotations

import asyncio
import socket
import sys
from pathlib import Path

from ralph_desk.cli.companion import RunnerSwitch
from ralph_desk.companion.host import CompanionHost
from ralph_desk.domain.enums import TaskStatus
from ralph_desk.loop.build import build_runner
from ralph_desk.loop.model import LoopSettings
from ralph_desk.loop.runner import LoopRunner
from ralph_desk.mcp_server.embedded import EmbeddedMcp
from ralph_desk.project.companion_home import CompanionHome, CompanionSettings
from tests.companion.conftest import LoopThread, Served
from tests.support.ide import HELD_AGENT
from tests.support.loop_project import open_loop_project

WAIT_S = 120


def test_the_loop_page_pauses_resumes_and_stops_the_loop_of_the_serving_process(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    services = open_loop_project(root, "Companion")
    paths = services.paths
    task = services.tasks.create("core", "backend", "Chart the tides")
    listener = socket.create_server(("127.0.0.1", 0))
    held = f"{sys.executable} {HELD_AGENT} {listener.getsockname()[1]}"
    # Unconfined: the held agent reports to a port on this machine's loopback (the sandbox has its own).
    settings = LoopSettings(agent="command", agent_command=held, sandbox=False)
    loop = LoopThread()

    async def start() -> tuple[EmbeddedMcp, LoopRunner, asyncio.Task[object], CompanionHost]:
        server = EmbeddedMcp(services)
        await server.start()
        runner = build_runner(services, server, settings)
        running: asyncio.Task[object] = asyncio.create_task(runner.run())
        on = CompanionSettings(enabled=True, host="127.0.0.1", port=0)
        host = CompanionHost(services, CompanionHome.of(paths), on, RunnerSwitch(runner, running))
        await host.start()
        return server, runner, running, host

    server, runner, running, host = loop.run(start())
    served = Served(root, services, host, loop)
    listener.settimeout(WAIT_S)
    agent, _ = listener.accept()
    try:
        with served.paired_client() as phone:
            assert "running" in phone.get("/loop").text
            assert phone.post("/act/loop/pause").status_code == 303
            assert runner.state.pause_requested
            assert "Pausing the loop" in phone.get("/loop").text
            assert phone.post("/act/loop/resume").status_code == 303
            assert not runner.state.pause_requested
            assert phone.post("/act/loop/stop").status_code == 303
            loop.run(asyncio.wait_for(asyncio.shield(running), WAIT_S), WAIT_S + 10)
            assert "stopped" in phone.get("/loop").text
    finally:
        agent.close()
        listener.close()
        loop.run(host.stop())
        loop.run(server.stop())
        loop.close()
        services.close()
    assert services.tasks.get(task.id).status is TaskStatus.PENDING  # stopped, not failed
