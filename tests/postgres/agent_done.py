"""A stand-in coding agent for the loop's command template: `python agent_done.py {mcp_config} {prompt_file}`.

It reads its session's MCP config, connects to ralph's server over HTTP with the session's bearer
token (the MCP SDK's own client) and closes the session with `done`, so the signal the loop acts on
is real. `RALPH_TEST_MACHINE` names the runner in the summary. With `RALPH_TEST_AGENT_GATE` set to a
named pipe, it first waits until someone writes a line into it (a barrier for the test to open).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


async def close_with_done(config_file: Path, prompt_file: Path) -> int:
    server = json.loads(config_file.read_text(encoding="utf-8"))["mcpServers"]["ralph"]
    heading = re.search(r"^# Task #(\d+): ", prompt_file.read_text(encoding="utf-8"), re.MULTILINE)
    task = f"#{heading.group(1)}" if heading else "?"
    summary = f"Task {task} finished on machine {os.environ.get('RALPH_TEST_MACHINE', '?')}."
    async with (
        httpx2.AsyncClient(headers=server["headers"], timeout=30) as http,
        Client(streamable_http_client(server["url"], http_client=http), mode="legacy") as client,
    ):
        result = await client.call_tool("done", {"summary": summary})
    if result.is_error:
        print(f"done was refused: {result.content}", file=sys.stderr)
        return 1
    print(summary)
    return 0


def main() -> int:
    gate = os.environ.get("RALPH_TEST_AGENT_GATE")
    if gate:
        with open(gate, encoding="utf-8") as pipe:  # blocks until the test opens the pipe to write
            pipe.readline()
    return asyncio.run(close_with_done(Path(sys.argv[1]), Path(sys.argv[2])))


if __name__ == "__main__":
    sys.exit(main())
