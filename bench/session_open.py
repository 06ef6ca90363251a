"""Row 3: a new agent session on the running embedded server — credential issued → `initialize`
answered → `tools/list` answered.

The server runs in this process (`EmbeddedMcp`, as in the window and `ralph-desk run`). One agent
process (`mcp_client.py sessions`) stays up, so that only the session is timed, not Python's start
(nor building its HTTP client object, nor closing the session afterwards):
for each session this process issues the credential (`open_session`, which also writes the
session's files), hands URL and token to the agent over a pipe, and the clock stops when the agent
says it has the tool list. The agent opens a new HTTP client (a new connection) per session.
The same is done against the bare server behind the same host, as the reference.

Two agents are timed: `raw` speaks the legacy handshake by hand (POST initialize, POST
notifications/initialized, POST tools/list on one connection), which is the server's cost of a
session; `sdk` is the Python SDK's `Client(..., mode="legacy")`, which also opens the GET stream
and adds its own client-side work (~10 ms more on this machine, for the bare server as well).

    python bench/session_open.py [--sessions 60]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path
from typing import Any

from _common import (
    BENCH_DIR,
    PYTHON,
    Row,
    db_file,
    emit,
    env_for_children,
    fmt_ms,
    make_project,
    median,
    ms,
    percentile,
    say,
    scratch_dir,
)

TARGET_MS = 10.0
WARMUP = 5
KINDS = ("raw", "sdk")


async def measure(root: Path, sessions: int) -> dict[str, Any]:
    from bare_server import build_bare_server

    from ralph_desk.domain.enums import Recipe
    from ralph_desk.domain.session import SessionContext
    from ralph_desk.mcp_server.auth import SessionTokens
    from ralph_desk.mcp_server.embedded import EmbeddedMcp
    from ralph_desk.mcp_server.hosting import HttpHost
    from ralph_desk.project import ProjectPaths
    from ralph_desk.services.container import Services

    services = Services.open(ProjectPaths.at(root))
    embedded = EmbeddedMcp(services)
    bare_tokens = SessionTokens()
    bare_host = HttpHost(build_bare_server(str(db_file(root))), bare_tokens)
    await embedded.start()
    await bare_host.start()
    agent = await asyncio.create_subprocess_exec(
        PYTHON,
        str(BENCH_DIR / "mcp_client.py"),
        "sessions",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=env_for_children(),
    )
    assert agent.stdin is not None and agent.stdout is not None

    async def one(url: str, token: str, kind: str) -> int:
        assert agent.stdin is not None and agent.stdout is not None
        agent.stdin.write(f"{url} {token} {kind}\n".encode())
        await agent.stdin.drain()
        answer = (await agent.stdout.readline()).decode().split()
        if not answer or answer[0] != "ok":
            raise RuntimeError(f"the agent failed: {answer}")
        return int(answer[1])

    async def ready() -> None:
        assert agent.stdout is not None
        if (await agent.stdout.readline()).strip() != b"ready":
            raise RuntimeError("the agent did not close its session")

    times: dict[str, list[float]] = {f"{server} {kind}": [] for server in ("ralph", "bare") for kind in KINDS}
    tools: dict[str, int] = {}
    try:
        for number in range(sessions + WARMUP):
            for kind in KINDS:
                context = SessionContext(
                    recipe=Recipe.TASK_EXECUTION,
                    task_id=1 + number % 10,
                    session_id=f"bench-session-{kind}-{number}",
                    discipline="backend",
                )
                start = time.perf_counter()
                endpoint = embedded.open_session(context)
                tools[f"ralph {kind}"] = await one(endpoint.url, endpoint.token, kind)
                elapsed = time.perf_counter() - start
                await ready()
                embedded.close_session(endpoint)

                start = time.perf_counter()
                token = bare_tokens.issue(SessionContext())
                tools[f"bare {kind}"] = await one(bare_host.url, token, kind)
                bare_elapsed = time.perf_counter() - start
                await ready()
                bare_tokens.revoke(token)
                if number >= WARMUP:
                    times[f"ralph {kind}"].append(ms(elapsed))
                    times[f"bare {kind}"].append(ms(bare_elapsed))
    finally:
        agent.stdin.close()
        await agent.wait()
        await bare_host.stop()
        await embedded.stop()
        services.close()
    return {"times": times, "tools": tools}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=60)
    args = parser.parse_args()
    with scratch_dir("sessions") as tmp:
        root = make_project(tmp / "project", tasks=10)
        result = asyncio.run(measure(root, args.sessions))
    times, tools = result["times"], result["tools"]
    figures: dict[str, Any] = {"sessions": args.sessions}
    for name, values in times.items():
        figures[name] = {"median_ms": median(values), "p95_ms": percentile(values, 95), "min_ms": min(values)}
        say(
            f"{name:10s} median {fmt_ms(median(values)):>9s}  p95 {fmt_ms(percentile(values, 95)):>9s}  "
            f"min {fmt_ms(min(values)):>9s}  ({tools[name]} tools listed)"
        )
    raw, sdk = figures["ralph raw"], figures["ralph sdk"]
    bare_raw, bare_sdk = figures["bare raw"], figures["bare sdk"]
    emit(
        Row(
            key="session_open",
            what="new agent session: credential → initialize → tools/list (median / p95)",
            measured=f"{fmt_ms(raw['median_ms'])} / {fmt_ms(raw['p95_ms'])}",
            target=f"≤ {TARGET_MS:g} ms",
            reference=f"bare MCPServer {fmt_ms(bare_raw['median_ms'])} / {fmt_ms(bare_raw['p95_ms'])}",
            ratio=f"{raw['median_ms'] / bare_raw['median_ms']:.2f}×",
            passed=raw["median_ms"] <= TARGET_MS,
            figures=figures,
            note=(
                f"protocol by hand (3 POSTs); with the Python SDK Client as the agent: "
                f"{fmt_ms(sdk['median_ms'])} vs bare {fmt_ms(bare_sdk['median_ms'])} "
                f"({sdk['median_ms'] / bare_sdk['median_ms']:.2f}×); {args.sessions} sessions each, "
                f"{tools['ralph raw']} tools listed"
            ),
        )
    )


if __name__ == "__main__":
    main()
