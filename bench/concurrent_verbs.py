"""Row 4: 8 agent sessions × 500 verb calls at once over HTTP, one SQLite file: errors, rows lost, calls/s.

The embedded server runs in this process. Eight agent processes (`mcp_client.py burst`) connect,
each with its own session credential (task_execution recipe, its own task and session id), say
they are ready, and all start on the same signal; each calls `flag` 500 times as fast as it goes.
Afterwards the database is counted: every acknowledged call must be a row, for each session.

    python bench/concurrent_verbs.py [--sessions 8] [--calls 500]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import time
from pathlib import Path
from typing import Any

from _common import (
    BENCH_DIR,
    PYTHON,
    Row,
    emit,
    env_for_children,
    fmt_ms,
    make_project,
    percentile,
    say,
    scratch_dir,
)

FLAG = {"what": "concurrent flag", "severity": "warning", "category": "performance"}


async def measure(root: Path, sessions: int, calls: int) -> dict[str, Any]:
    from sqlalchemy import func, select

    from ralph_desk.domain.enums import Recipe
    from ralph_desk.domain.session import SessionContext
    from ralph_desk.mcp_server.embedded import EmbeddedMcp
    from ralph_desk.project import ProjectPaths
    from ralph_desk.services.container import Services
    from ralph_desk.store.schema import TaskSignalRow

    services = Services.open(ProjectPaths.at(root))
    embedded = EmbeddedMcp(services)
    await embedded.start()
    endpoints = [
        embedded.open_session(
            SessionContext(
                recipe=Recipe.TASK_EXECUTION,
                task_id=number + 1,
                session_id=f"bench-burst-{number}",
                discipline="backend",
            )
        )
        for number in range(sessions)
    ]
    agents = []
    try:
        for endpoint in endpoints:
            agents.append(
                await asyncio.create_subprocess_exec(
                    PYTHON,
                    str(BENCH_DIR / "mcp_client.py"),
                    "burst",
                    "--url",
                    endpoint.url,
                    f"--token={endpoint.token}",
                    "--tool",
                    "flag",
                    "--args",
                    json.dumps(FLAG),
                    "--calls",
                    str(calls),
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    env=env_for_children(),
                )
            )
        for agent in agents:  # every agent connected and initialized
            assert agent.stderr is not None
            line = await asyncio.wait_for(agent.stderr.readline(), timeout=120)
            if line.strip() != b"ready":
                raise RuntimeError(f"an agent failed to connect: {line!r}")
        went = time.monotonic()
        cpu_before = resource.getrusage(resource.RUSAGE_SELF)
        for agent in agents:
            assert agent.stdin is not None
            agent.stdin.write(b"go\n")
        await asyncio.gather(*(agent.stdin.drain() for agent in agents if agent.stdin is not None))
        outputs = await asyncio.gather(*(agent.communicate() for agent in agents))
        cpu_after = resource.getrusage(resource.RUSAGE_SELF)
        results = []
        for agent, (out, err) in zip(agents, outputs, strict=True):
            if agent.returncode != 0:
                raise RuntimeError(f"an agent failed: {err.decode()[-1500:]}")
            results.append(json.loads(out.decode().strip().splitlines()[-1]))
    finally:
        for endpoint in endpoints:
            embedded.close_session(endpoint)
        await embedded.stop()
    with services.db.read() as unit:
        counted = dict(
            unit.session.execute(
                select(TaskSignalRow.session_id, func.count())
                .where(TaskSignalRow.session_id.like("bench-burst-%"))
                .group_by(TaskSignalRow.session_id)
            ).all()
        )
    integrity = services.db.integrity_ok()
    services.close()
    acked = {f"bench-burst-{number}": result["acked"] for number, result in enumerate(results)}
    lost = sum(max(0, acked[session] - counted.get(session, 0)) for session in acked)
    extra = sum(max(0, counted.get(session, 0) - acked[session]) for session in acked)
    latencies = [value for result in results for value in result["latencies_ms"]]
    began = min(result["began"] for result in results)
    ended = max(result["ended"] for result in results)
    total_acked = sum(acked.values())
    server_cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    return {
        "sessions": sessions,
        "calls_per_session": calls,
        "acked": total_acked,
        "errors": sum(result["errors"] for result in results),
        "failures": [failure for result in results for failure in result["failures"]][:5],
        "rows": sum(counted.values()),
        "rows_lost": lost,
        "rows_unacknowledged": extra,
        "integrity_ok": integrity,
        "seconds": ended - began,
        "start_spread_s": began - went,
        "calls_per_s": total_acked / (ended - began),
        "server_cpu_s": server_cpu,
        "server_cpu_ms_per_call": 1000 * server_cpu / max(1, total_acked + sum(r["errors"] for r in results)),
        "p50_ms": percentile(latencies, 50),
        "p95_ms": percentile(latencies, 95),
        "p99_ms": percentile(latencies, 99),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--calls", type=int, default=500)
    args = parser.parse_args()
    with scratch_dir("burst") as tmp:
        root = make_project(tmp / "project", tasks=args.sessions)
        figures = asyncio.run(measure(root, args.sessions, args.calls))
    say(
        f"{figures['sessions']} sessions × {figures['calls_per_session']} flag calls: "
        f"{figures['acked']} acknowledged, {figures['errors']} errors, {figures['rows']} rows "
        f"({figures['rows_lost']} lost, {figures['rows_unacknowledged']} unacknowledged), "
        f"integrity {'ok' if figures['integrity_ok'] else 'FAILED'}"
    )
    say(
        f"{figures['seconds']:.2f} s → {figures['calls_per_s']:.0f} calls/s; per call p50 "
        f"{fmt_ms(figures['p50_ms'])}, p95 {fmt_ms(figures['p95_ms'])}, p99 {fmt_ms(figures['p99_ms'])}; "
        f"server CPU {fmt_ms(figures['server_cpu_ms_per_call'])} per call"
    )
    for failure in figures["failures"]:
        say(f"  failure: {failure}")
    expected = figures["sessions"] * figures["calls_per_session"]
    passed = (
        figures["errors"] == 0
        and figures["rows_lost"] == 0
        and figures["rows_unacknowledged"] == 0
        and figures["rows"] == expected
        and figures["integrity_ok"]
    )
    emit(
        Row(
            key="concurrent_verbs",
            what=f"{figures['sessions']} sessions × {figures['calls_per_session']} verb calls at once (HTTP)",
            measured=(
                f"{figures['errors']} errors, {figures['rows_lost']} rows lost "
                f"({figures['rows']}/{expected} rows); {figures['calls_per_s']:.0f} calls/s"
            ),
            target="0 errors, 0 rows lost; calls/s reported",
            reference="—",
            ratio="—",
            passed=passed,
            figures=figures,
            note=(
                f"per call p50 {fmt_ms(figures['p50_ms'])}, p95 {fmt_ms(figures['p95_ms'])}; "
                f"server CPU {fmt_ms(figures['server_cpu_ms_per_call'])} per call"
            ),
        )
    )


if __name__ == "__main__":
    main()
