"""The agent side of the MCP benchmarks: a separate process, as an agent CLI is, speaking the legacy
protocol Claude Code speaks (`2025-11-25`: initialize, `Mcp-Session-Id`; a POST is answered with plain
JSON by the embedded host, as `HttpHost` serves both servers, or with an SSE stream by others).

    python bench/mcp_client.py latency --url URL --token T --tool get_task --args '{"id": 1}' --calls 300
    python bench/mcp_client.py latency --stdio '["ralph-desk", "mcp", "--root", "."]' --tool get_task ...
    python bench/mcp_client.py sessions          # reads "URL TOKEN" lines, answers "ok <tools>" per session
    python bench/mcp_client.py burst --url URL --token T --tool flag --args '{...}' --calls 500

Each mode prints one JSON document (sessions: one line per session) on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

_validation_s: list[float] = [0.0]
_validate = ClientSession.validate_tool_result


async def _timed_validate(self: ClientSession, name: str, result: Any) -> None:
    """The SDK client checks each structured result against the tool's output schema: time it apart."""
    start = time.perf_counter()
    try:
        await _validate(self, name, result)
    finally:
        _validation_s[0] += time.perf_counter() - start


ClientSession.validate_tool_result = _timed_validate  # type: ignore[method-assign]


@asynccontextmanager
async def connect(url: str | None, token: str | None, stdio: list[str] | None) -> AsyncIterator[Client]:
    """A legacy-protocol client, initialized, over HTTP with a bearer token or over a spawned stdio server."""
    if stdio is not None:
        # This process's environment (the checkout on PYTHONPATH): the SDK would pass only a safe few.
        target: Any = StdioServerParameters(command=stdio[0], args=stdio[1:], env=dict(os.environ))
        async with Client(target, mode="legacy") as client:
            yield client
        return
    assert url is not None and token is not None
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    async with http, Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
        yield client


async def latency(args: argparse.Namespace) -> dict[str, Any]:
    arguments = json.loads(args.args)
    async with connect(args.url, args.token, json.loads(args.stdio) if args.stdio else None) as client:
        for _ in range(args.warmup):
            result = await client.call_tool(args.tool, arguments)
            if result.is_error:
                raise SystemExit(f"{args.tool} failed: {result.content}")
        times: list[float] = []
        net: list[float] = []
        errors = 0
        for _ in range(args.calls):
            _validation_s[0] = 0.0
            start = time.perf_counter()
            result = await client.call_tool(args.tool, arguments)
            elapsed = time.perf_counter() - start
            times.append(elapsed * 1000)
            net.append((elapsed - _validation_s[0]) * 1000)
            errors += bool(result.is_error)
    return {"latencies_ms": times, "net_latencies_ms": net, "errors": errors}


async def burst(args: argparse.Namespace) -> dict[str, Any]:
    """`calls` calls as fast as one client goes; connects, says "ready", and starts on a line on stdin."""
    arguments = json.loads(args.args)
    acked = errors = 0
    failures: list[str] = []
    times: list[float] = []
    async with connect(args.url, args.token, None) as client:
        sys.stderr.write("ready\n")
        sys.stderr.flush()
        await anyio.wrap_file(sys.stdin).readline()
        began = time.monotonic()
        for number in range(args.calls):
            call_arguments = {**arguments, "what": f"{arguments.get('what', 'flag')} #{number}"}
            start = time.perf_counter()
            try:
                result = await client.call_tool(args.tool, call_arguments)
            except Exception as error:  # a transport failure counts as an error, and the burst goes on
                errors += 1
                failures.append(repr(error)[:200])
                continue
            times.append((time.perf_counter() - start) * 1000)
            if result.is_error:
                errors += 1
                failures.append(str(result.content)[:200])
            else:
                acked += 1
        ended = time.monotonic()
    return {
        "acked": acked,
        "errors": errors,
        "failures": failures[:5],
        "began": began,
        "ended": ended,
        "latencies_ms": times,
    }


PROTOCOL = "2025-11-25"


def _sse_message(response: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC message of a POST's answer: an SSE stream (legacy servers) or plain JSON."""
    response.raise_for_status()
    if response.headers.get("content-type", "").startswith("application/json"):
        message: dict[str, Any] = response.json()
        return message
    for line in response.text.splitlines():
        if line.startswith("data:"):
            message = json.loads(line[5:])
            if "id" in message:
                return message
    raise RuntimeError(f"no JSON-RPC answer in {response.text[:200]!r}")


async def raw_session(http: httpx2.AsyncClient, url: str) -> tuple[int, dict[str, str]]:
    """The legacy handshake by hand: initialize, notifications/initialized, tools/list — nothing else."""
    headers = {"Accept": "application/json, text/event-stream"}
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        },
    }
    answer = await http.post(url, json=initialize, headers=headers)
    if "result" not in _sse_message(answer):
        raise RuntimeError("initialize failed")
    headers["Mcp-Session-Id"] = answer.headers["mcp-session-id"]
    headers["MCP-Protocol-Version"] = PROTOCOL
    notified = await http.post(
        url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
    )
    notified.raise_for_status()
    listed = _sse_message(
        await http.post(
            url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}, headers=headers
        )
    )
    return len(listed["result"]["tools"]), headers


async def sessions() -> None:
    """For each "URL TOKEN KIND" line: initialize and tools/list on a new connection, then "ok N".

    KIND `sdk` is the SDK's `Client(..., mode="legacy")` (it also opens the GET stream and waits for
    the notification's 202 before listing); `raw` is the three POSTs by hand. The HTTP client object
    is built before the credential arrives (building one loads TLS settings: the agent's own
    start-up, not the session's), and the session is closed after "ok" is written; "ready" follows
    once the next client object is built.
    """
    stdin = anyio.wrap_file(sys.stdin)
    http = httpx2.AsyncClient(timeout=60)
    while True:
        line = await stdin.readline()
        if not line.strip():
            await http.aclose()
            return
        url, token, kind = line.split()
        http.headers["Authorization"] = f"Bearer {token}"
        if kind == "raw":
            async with http:
                tools_listed, headers = await raw_session(http, url)
                sys.stdout.write(f"ok {tools_listed}\n")
                sys.stdout.flush()
                await http.delete(url, headers=headers)
        else:
            async with http, Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
                tools = (await client.list_tools()).tools  # entering the client sent initialize
                sys.stdout.write(f"ok {len(tools)}\n")
                sys.stdout.flush()
        http = httpx2.AsyncClient(timeout=60)
        sys.stdout.write("ready\n")
        sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="mode", required=True)
    for mode in ("latency", "burst"):
        one = sub.add_parser(mode)
        one.add_argument("--url")
        one.add_argument("--token")
        one.add_argument("--stdio", help="a JSON list: the server command to spawn")
        one.add_argument("--tool", required=True)
        one.add_argument("--args", default="{}")
        one.add_argument("--calls", type=int, default=300)
        one.add_argument("--warmup", type=int, default=20)
    sub.add_parser("sessions")
    args = parser.parse_args()
    if args.mode == "sessions":
        anyio.run(sessions)
        return
    runner = latency if args.mode == "latency" else burst
    print(json.dumps(anyio.run(runner, args)), flush=True)


if __name__ == "__main__":
    main()
