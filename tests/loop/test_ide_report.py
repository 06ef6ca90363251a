"""`ralph_run` reports back to an IDE (issue 23, seeds 003/004): over stdio with the SDK's `Client`.

A `wait`ing run sends progress per session and returns seed 003's summary with its log; a run that
returns at once is summarised by `ralph_status(loop_id)` once it has ended; `ralph_history` tells an
older run's iteration with the agent's last words; a read-only command agent outside git is refused
before it changes anything; and a client that goes leaves no traceback behind.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TextIO

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from ralph_desk.project import ProjectPaths, init_project
from tests.loop.test_ide_stdio import add_tasks, until_ended
from tests.support import stand_in_agent
from tests.support.ide import HELD_AGENT, agent_gone, agent_line, agent_started, call, use_command_agent
from tests.support.stdio_wire import mcp_command

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.sqlite_only]

LOG_NAME = re.compile(r"\d{8}-\d{6}_ralph_run(-\d+)?\.log")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def ide(paths: ProjectPaths, log_dir: Path, errlog: TextIO) -> AsyncIterator[Client]:
    """An IDE's client of `ralph-desk mcp --root ROOT --log-dir DIR`, the server's stderr into `errlog`."""
    env = {key: value for key, value in os.environ.items() if key != "ANTHROPIC_BASE_URL"}
    args = mcp_command(paths, "--log-dir", str(log_dir))[1:]
    params = StdioServerParameters(command=sys.executable, args=args, env=env)
    async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
        yield client


def use_writing_agent(paths: ProjectPaths, name: str = "notes.md") -> None:
    """The stand-in agent: writes `name` in the project folder, then calls `done`."""
    calls = [
        f'Write={{"file_path": "{name}", "content": "written by the agent\\n"}}',
        'done={"summary": "wrote the notes"}',
    ]
    words = ["-I", stand_in_agent.__file__, "{prompt_file}", "{mcp_config}"]
    use_command_agent(paths, *words, *(word for item in calls for word in ("--call", item)))


def plain_project(tmp_path: Path) -> ProjectPaths:
    """A project in a folder that is no git repository."""
    root = tmp_path / "plain"
    root.mkdir()
    return init_project(root, title="Plain")


async def test_a_waiting_run_reports_progress_and_its_summary_and_any_run_is_told_later(
    tmp_path: Path,
) -> None:
    paths, log_dir = plain_project(tmp_path), tmp_path / "ide-logs"
    first, second, third = add_tasks(paths, "Write the notes", "Write them again", "And once more")
    use_writing_agent(paths)
    progress: list[tuple[float, float | None, str | None]] = []

    async def seen(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    with (tmp_path / "stderr.txt").open("w") as errlog:
        async with ide(paths, log_dir, errlog) as client:
            arguments = {"max_iterations": 2, "allow_edits": True, "wait": True}
            result = await client.call_tool("ralph_run", arguments, progress_callback=seen)
            assert not result.is_error, result.content
            ran = result.structured_content or {}
            summary = ran["summary"]
            assert ran["status"] == "completed" and ran["loopId"] == summary["loopId"]
            assert (summary["sessionsRun"], summary["tasksCompleted"], summary["tasksFailed"]) == (2, 2, 0)
            assert (summary["tasksWaiting"], summary["exitCode"]) == (0, 0)
            assert summary["filesChanged"] == ["notes.md"] and summary["costUsd"] >= 0
            assert [(done, total) for done, total, _ in progress] == [(1, 2), (2, 2)]
            assert progress[0][2] == f"session 1 ended: task #{first} done"

            # The log of the call: named as seed 003 says, in --log-dir, owner-only, its summary beside it.
            log_path = Path(ran["logPath"])
            assert summary["logPath"] == str(log_path)
            assert log_path.parent == log_dir and LOG_NAME.fullmatch(log_path.name), log_path
            assert stat.S_IMODE(log_path.stat().st_mode) == 0o600
            beside = json.loads(log_path.with_suffix(".json").read_text(encoding="utf-8"))
            assert beside["outcome"] == "ok" and beside["loop_summary"] == summary
            assert "session_ended" in log_path.read_text(encoding="utf-8")

            # Without wait: the loop id at once; ralph_status(loop_id) gives the same summary once ended.
            started = await call(client, "ralph_run", {"allow_edits": True})
            assert started["status"] == "running" and "summary" not in started
            assert Path(started["logPath"]).is_file() and started["logPath"] != ran["logPath"]
            ended = await until_ended(client)
            assert ended["loopStatus"] == {
                "loopId": started["loopId"],
                "iterationNumber": 1,
                "status": "completed",
            }
            later = (await call(client, "ralph_status", {"loop_id": started["loopId"]}))["summary"]
            assert (later["loopId"], later["sessionsRun"], later["logPath"]) == (
                started["loopId"],
                1,
                started["logPath"],
            )
            assert (await call(client, "ralph_status", {"loop_id": ran["loopId"]}))["summary"] == summary
            unknown = await call(client, "ralph_status", {"loop_id": 99})
            assert (
                unknown["error"]["code"] == "invalid_argument"
                and "no loop run #99" in unknown["error"]["message"]
            )

            # The history of the older run: its iteration with the agent's last words and signals.
            older = (await call(client, "ralph_history", {"iteration": 2, "loop_id": ran["loopId"]}))[
                "iteration"
            ]
            assert (older["taskAttempted"], older["loopId"]) == (second, ran["loopId"])
            assert older["finalText"] == "Session over." and older["summary"] == "wrote the notes"
            assert [signal["verb"] for signal in older["signals"]] == ["done"]
            latest = (await call(client, "ralph_history", {"iteration": 1}))["iteration"]
            assert (latest["taskAttempted"], latest["loopId"]) == (third, started["loopId"])
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text(encoding="utf-8")


async def test_a_read_only_command_agent_outside_git_is_refused_before_it_changes_anything(
    tmp_path: Path,
) -> None:
    paths, log_dir = plain_project(tmp_path), tmp_path / "ide-logs"
    add_tasks(paths, "Write the notes")
    use_writing_agent(paths)
    with (tmp_path / "stderr.txt").open("w") as errlog:
        async with ide(paths, log_dir, errlog) as client:
            refused = (await call(client, "ralph_run", {"wait": True}))["error"]
            assert refused["code"] == "invalid_argument"
            assert "not in a git repository" in refused["message"] and "allow_edits" in refused["message"]
            log_path = Path(refused["details"]["logPath"])
            assert log_path.parent == log_dir and LOG_NAME.fullmatch(log_path.name)
            assert (
                json.loads(log_path.with_suffix(".json").read_text(encoding="utf-8"))["outcome"] == "refused"
            )
            understand = (await call(client, "ralph_understand", {}))["error"]
            assert understand["code"] == "invalid_argument"
            assert "not in a git repository" in understand["message"]
            status = await call(client, "ralph_status", {})
            assert status["status"] == "not_running" and "summary" not in status
    assert not (paths.root / "notes.md").exists()


async def test_allowed_paths_is_a_run_argument_inside_the_project(tmp_path: Path) -> None:
    paths, log_dir = plain_project(tmp_path), tmp_path / "ide-logs"
    add_tasks(paths, "Write the notes")
    use_writing_agent(paths)
    with (tmp_path / "stderr.txt").open("w") as errlog:
        async with ide(paths, log_dir, errlog) as client:
            for path in ("/etc", "../elsewhere/**", "docs/../../x"):
                refused = await call(client, "ralph_run", {"allow_edits": True, "allowed_paths": [path]})
                assert refused["error"]["code"] == "invalid_argument", path
                assert "allowed_paths[0]" in refused["error"]["message"], refused
            arguments = {"allow_edits": True, "allowed_paths": ["docs/**"], "wait": True, "max_iterations": 1}
            summary = (await call(client, "ralph_run", arguments))["summary"]
    # The edit outside docs/ was taken out of the tree (kept under .ralph/put-aside/).
    assert not (paths.root / "notes.md").exists()
    assert list((paths.ralph / "put-aside").glob("*/notes.md"))
    assert summary["sessionsRun"] == 1 and summary["exitCode"] == 0, summary


async def test_a_client_that_goes_away_mid_session_leaves_no_traceback(tmp_path: Path) -> None:
    paths, log_dir = plain_project(tmp_path), tmp_path / "ide-logs"
    add_tasks(paths, "Held while the IDE goes")
    async with agent_line() as (port, listener):
        use_command_agent(paths, str(HELD_AGENT), str(port))
        with (tmp_path / "stderr.txt").open("w") as errlog:
            async with ide(paths, log_dir, errlog) as client:
                started = await call(client, "ralph_run", {"allow_edits": True})
                agent = await agent_started(listener)
        async with agent:
            await agent_gone(agent)
    stderr = (tmp_path / "stderr.txt").read_text(encoding="utf-8")
    assert "MCP server stopped" in stderr and "Traceback" not in stderr, stderr
    beside = json.loads(Path(started["logPath"]).with_suffix(".json").read_text(encoding="utf-8"))
    assert beside["loop_summary"]["status"] == "stopped" and beside["loop_summary"]["sessionsRun"] == 1
