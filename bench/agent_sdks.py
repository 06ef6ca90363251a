"""The official agent SDKs against ralph's own stream parsers: what they parse, start-up cost, stopping.

    .venv/bin/pip install claude-agent-sdk openai-codex   # for this script only: not dependencies
    .venv/bin/python bench/agent_sdks.py [--runs N]

Parts: (1) import cost of each SDK beside our parsers; (2) our recorded Claude Code streams
(tests/loop/fixtures) read by the SDK's message parser, and which fields our parser uses it drops;
(3) with tools/npm's Claude Code and the scripted model API on 127.0.0.1: spawn -> init event and
spawn -> result through our command line and through the SDK's `query()`; (4) stopping a session whose
model never answers: our process-group stop against the SDK's `disconnect()`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _common import PYTHON, REPO, Row, emit, fmt_ms, median, ms, say, scratch_dir

from ralph_desk.loop.agents.claude_stream import ClaudeStreamParser
from ralph_desk.loop.model import EventKind
from ralph_desk.process_tree import own_group, stop_tree
from tests.support.fake_model_api import FakeModelApi, Hang, Text
from tests.support.npm_tools import claude_bin

FIXTURES = REPO / "tests" / "loop" / "fixtures"
OURS = "import ralph_desk.loop.agents.claude_stream, ralph_desk.loop.agents.codex_stream"
# What our parser reads on a synthetic API-error message: usage limit or 429, and when it lifts.
# A stdio MCP server that writes its pid, ignores SIGTERM and keeps running once its client is gone,
# as a dev server or a watcher an agent started would: stopping a session must end it too.
LINGERING_SERVER = """
import os, signal, sys, threading
from mcp.server.mcpserver import MCPServer
open(sys.argv[1], "w").write(str(os.getpid()))
signal.signal(signal.SIGTERM, signal.SIG_IGN)
server = MCPServer("lingering")
@server.tool()
def ping() -> str:
    return "pong"
server.run()
threading.Event().wait()
"""
API_ERROR_FIELDS = ("api_error_status", "api_error", "api_error_params", "is_api_error_message")


def import_seconds(statement: str, runs: int) -> float:
    """Median CPU time of a fresh interpreter that runs `statement`, less an empty interpreter's.

    CPU time, not wall time: the figure stays put on a machine that other work keeps busy.
    """

    def once(code: str) -> float:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([PYTHON, "-c", code], check=True, cwd=REPO)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)

    empty = median([once("pass") for _ in range(runs)])
    return median([once(statement) for _ in range(runs)]) - empty


def import_costs(runs: int) -> None:
    """Each SDK alone, and on top of what the app has loaded anyway (the loop runner, the MCP SDK)."""
    for label, statement in (
        ("our Claude and Codex parsers", OURS),
        ("claude_agent_sdk", "import claude_agent_sdk"),
        ("openai_codex", "import openai_codex"),
    ):
        seconds = import_seconds(statement, runs)
        emit(Row(f"sdk-import-{label.split()[0]}", f"import {label} (CPU)", fmt_ms(ms(seconds)), "info"))
    loaded = f"{OURS}, ralph_desk.loop.runner, mcp.server"
    base = import_seconds(loaded, runs)
    for sdk in ("claude_agent_sdk", "openai_codex"):
        extra = import_seconds(f"{loaded}; import {sdk}", runs) - base
        what = f"{sdk} on top of the loop (CPU)"
        emit(Row(f"sdk-import-extra-{sdk}", what, f"+{fmt_ms(ms(extra))}", "info"))


def fixtures_through_the_sdk() -> None:
    from claude_agent_sdk._internal.message_parser import parse_message

    lines = typed = generic = 0
    dropped: set[str] = set()
    for path in sorted(FIXTURES.glob("claude_*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            event = json.loads(line)
            message = parse_message(event)
            lines += 1
            name = type(message).__name__
            generic += name == "SystemMessage"  # init, api_retry, permission_denied: the raw dict only
            typed += name != "SystemMessage"
            if event.get("type") == "assistant":
                dropped |= {key for key in API_ERROR_FIELDS if key in event and not hasattr(message, key)}
    say(f"  {lines} recorded Claude Code events: {typed} typed, {generic} generic SystemMessage (raw dict)")
    say(f"  dropped from synthetic API-error messages: {', '.join(sorted(dropped)) or 'nothing'}")
    emit(
        Row(
            "sdk-fixtures", "fixture events the SDK parses", f"{lines}/{lines}", "info", note=f"{generic} raw"
        )
    )


def offline_env(api: FakeModelApi, home: Path) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        **api.env(),
    }


async def ours_once(claude: Path, env: dict[str, str], work: Path) -> tuple[float, float]:
    """spawn -> init event, spawn -> result event, our way: `claude -p` read by ClaudeStreamParser."""
    argv = [str(claude), "-p", "--output-format", "stream-json", "--verbose", "--max-turns", "2", "--", "Hi"]
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        *argv, cwd=work, env=env, stdout=asyncio.subprocess.PIPE, stdin=asyncio.subprocess.DEVNULL
    )
    parser = ClaudeStreamParser()
    init = result = float("nan")
    assert process.stdout is not None
    async for raw in process.stdout:
        for event in parser.feed(raw.decode()):
            now = time.perf_counter() - started
            if event.kind is EventKind.INIT:
                init = now
            elif event.kind is EventKind.RESULT:
                result = now
    await process.wait()
    return init, result


async def sdk_once(claude: Path, env: dict[str, str], work: Path) -> tuple[float, float]:
    """The same session through the SDK's `query()` (it spawns the CLI in streaming-input mode)."""
    from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, SystemMessage, query

    options = ClaudeAgentOptions(cli_path=claude, env=env, cwd=work, max_turns=2, setting_sources=[])
    started = time.perf_counter()
    init = result = float("nan")
    async for message in query(prompt="Hi", options=options):
        now = time.perf_counter() - started
        if isinstance(message, SystemMessage) and message.subtype == "init":
            init = now
        elif isinstance(message, ResultMessage):
            result = now
    return init, result


async def live_sessions(claude: Path, runs: int, work: Path) -> None:
    """Both ways, interleaved run by run, so that a busy machine weighs on both alike."""
    ways = {"ours": ("our command line", ours_once), "sdk": ("claude_agent_sdk query()", sdk_once)}
    inits: dict[str, list[float]] = {key: [] for key in ways}
    results: dict[str, list[float]] = {key: [] for key in ways}
    for number in range(runs):
        for key, (_, run) in ways.items():
            with FakeModelApi([Text("Done.")]) as api:
                init, result = await run(claude, offline_env(api, work / f"home-{key}-{number}"), work)
            inits[key].append(init)
            results[key].append(result)
    for key, (label, _) in ways.items():
        init, result = fmt_ms(ms(median(inits[key]))), fmt_ms(ms(median(results[key])))
        emit(Row(f"sdk-spawn-init-{key}", f"{label}: spawn -> init", init, "info"))
        emit(Row(f"sdk-spawn-result-{key}", f"{label}: spawn -> result", result, "info"))


def lingering_config(work: Path) -> tuple[dict[str, Any], Path]:
    """The MCP servers of a stopped session (one lingering stdio server) and where it writes its pid."""
    script, pid_file = work / "lingering.py", work / "lingering.pid"
    script.write_text(LINGERING_SERVER, encoding="utf-8")
    pid_file.unlink(missing_ok=True)
    return {"lingering": {"command": PYTHON, "args": [str(script), str(pid_file)]}}, pid_file


def still_running(pid_file: Path, within_s: float = 5.0) -> bool:
    """Whether the process named in `pid_file` is still running `within_s` after the stop returned."""
    try:
        descriptor = os.pidfd_open(int(pid_file.read_text()))
    except (OSError, ValueError):
        return False  # never started, or already gone
    try:
        ended, _, _ = select.select([descriptor], [], [], within_s)  # readable once the process ends
    finally:
        os.close(descriptor)
    return not ended


async def stop_ours(claude: Path, env: dict[str, str], work: Path) -> float:
    """A session in its own group, stopped once its init event is read: seconds until it has exited."""
    servers, _ = lingering_config(work)
    config = work / "mcp.json"
    config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    argv = [str(claude), "-p", "--output-format", "stream-json", "--verbose", "--mcp-config", str(config)]
    argv += ["--strict-mcp-config", "--", "Hi"]
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=work,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.DEVNULL,
        **own_group(),
    )
    assert process.stdout is not None
    parser = ClaudeStreamParser()
    while line := await process.stdout.readline():
        if any(event.kind is EventKind.INIT for event in parser.feed(line.decode())):
            break
    started = time.perf_counter()
    await stop_tree(process, grace_s=5.0)
    await process.wait()
    return time.perf_counter() - started


async def stop_sdk(claude: Path, env: dict[str, str], work: Path) -> float:
    """The SDK's client, disconnected once its init message is read: seconds until `disconnect()` returns."""
    from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, SystemMessage

    servers, _ = lingering_config(work)
    options = ClaudeAgentOptions(
        cli_path=claude, env=env, cwd=work, setting_sources=[], mcp_servers=servers, strict_mcp_config=True
    )
    client = ClaudeSDKClient(options)
    await client.connect()
    await client.query("Hi")
    async for message in client.receive_messages():
        if isinstance(message, SystemMessage) and message.subtype == "init":
            break
    started = time.perf_counter()
    await client.disconnect()
    return time.perf_counter() - started


async def stopping(claude: Path, work: Path) -> None:
    for label, stop in (("our process-group stop", stop_ours), ("claude_agent_sdk disconnect()", stop_sdk)):
        with FakeModelApi([Hang(timeout=60)]) as api:
            seconds = await stop(claude, offline_env(api, work / "home-stop"), work)
            api.release()
        pid_file = work / "lingering.pid"
        left = still_running(pid_file)
        if left:  # end it here, so that one measurement does not leak into the next
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
        key = "ours" if label.startswith("our") else "sdk"
        note = "its MCP server was left running" if left else "nothing left running"
        emit(Row(f"sdk-stop-{key}", f"{label}: stop -> exited", fmt_ms(ms(seconds)), "info", note=note))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    try:
        import claude_agent_sdk
        import openai_codex
    except ImportError as error:
        sys.exit(f"{error}: install the SDKs first (`.venv/bin/pip install claude-agent-sdk openai-codex`)")
    say(f"claude-agent-sdk {claude_agent_sdk.__version__}, openai-codex {openai_codex.__version__}")
    import_costs(args.runs)
    fixtures_through_the_sdk()
    claude = claude_bin()
    if claude is None:
        say("tools/npm has no Claude Code: the live part is skipped (`npm ci --prefix tools/npm`)")
        return
    with scratch_dir("sdks") as work:
        asyncio.run(live_sessions(claude, args.runs, work))
        asyncio.run(stopping(claude, work))


if __name__ == "__main__":
    main()
