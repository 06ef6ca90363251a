"""Row 2: `tools/call` p50 / p95 over stdio and over the embedded HTTP server, against the bare server.

The server side runs as the window and `ralph-desk run` run it: `EmbeddedMcp` (uvicorn in this
process's asyncio loop, bearer gate, a credential per session). The bare reference is served by the
same `HttpHost` behind the same gate. The client is another process (`mcp_client.py`), speaking the
legacy protocol version Claude Code uses (`2025-11-25`). Over stdio the client spawns the server.
Tools: `get_task` (a cheap read, IDE session) and `flag` (a verb that writes, task_execution session).

The figures are round trips as the client sees them, less the time the Python SDK client spends
checking each structured result against the tool's output schema (its `jsonschema` check: ~1 ms
for `get_task`'s rich result, next to nothing for the bare tool's small one). That is the agent's
own work, and another agent does it in its own way; the round trips with it are reported too.

    python bench/tool_latency.py [--calls 300] [--rounds 2] [--only stdio|http]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
from pathlib import Path
from typing import Any

from _common import (
    BENCH_DIR,
    PYTHON,
    RALPH_DESK,
    Row,
    db_file,
    emit,
    env_for_children,
    fmt_ms,
    make_project,
    percentile,
    say,
    scratch_dir,
)

TARGET_P50_MS = 5.0
TARGET_RATIO = 1.2
GET_TASK = {"id": 1}
FLAG = {"what": "the benchmark flags this", "severity": "info", "category": "performance"}


async def client(mode_args: list[str]) -> dict[str, Any]:
    process = await asyncio.create_subprocess_exec(
        PYTHON,
        str(BENCH_DIR / "mcp_client.py"),
        *mode_args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env_for_children(),
    )
    out, err = await process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"client failed ({process.returncode}): {err.decode()[-2000:]}")
    result: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    return result


def summary(latencies: list[float]) -> dict[str, float]:
    return {"p50_ms": percentile(latencies, 50), "p95_ms": percentile(latencies, 95), "calls": len(latencies)}


async def measure(root: Path, calls: int, rounds: int, only: str | None = None) -> dict[str, Any]:
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
    bare_token = bare_tokens.issue(SessionContext())
    bare_host = HttpHost(build_bare_server(str(db_file(root))), bare_tokens)
    await embedded.start()
    await bare_host.start()
    ide = embedded.open_session(SessionContext(recipe=Recipe.IDE, session_id="bench-ide"))
    worker = embedded.open_session(
        SessionContext(
            recipe=Recipe.TASK_EXECUTION, task_id=2, session_id="bench-http-flag", discipline="backend"
        )
    )
    common = ["--calls", str(calls), "--warmup", "20"]
    cases: dict[str, list[str]] = {
        "http ralph get_task": [
            "--url",
            ide.url,
            f"--token={ide.token}",
            "--tool",
            "get_task",
            "--args",
            json.dumps(GET_TASK),
        ],
        "http bare get_task": [
            "--url",
            bare_host.url,
            f"--token={bare_token}",
            "--tool",
            "get_task",
            "--args",
            json.dumps(GET_TASK),
        ],
        "http ralph flag": [
            "--url",
            worker.url,
            f"--token={worker.token}",
            "--tool",
            "flag",
            "--args",
            json.dumps(FLAG),
        ],
        "stdio ralph get_task": [
            "--stdio",
            json.dumps([RALPH_DESK, "mcp", "--root", str(root)]),
            "--tool",
            "get_task",
            "--args",
            json.dumps(GET_TASK),
        ],
        "stdio bare get_task": [
            "--stdio",
            json.dumps([PYTHON, str(BENCH_DIR / "bare_server.py"), "--db", str(db_file(root))]),
            "--tool",
            "get_task",
            "--args",
            json.dumps(GET_TASK),
        ],
        "stdio ralph flag": [
            "--stdio",
            json.dumps(
                [RALPH_DESK, "mcp", "--root", str(root), "--task-id", "3", "--session-id", "bench-stdio-flag"]
            ),
            "--tool",
            "flag",
            "--args",
            json.dumps(FLAG),
        ],
    }
    if only is not None:
        cases = {name: arguments for name, arguments in cases.items() if name.startswith(only)}
    latencies: dict[str, list[float]] = {name: [] for name in cases}
    full: dict[str, list[float]] = {name: [] for name in cases}
    server_cpu: dict[str, float] = {name: 0.0 for name in cases}
    calls_made: dict[str, int] = {name: 0 for name in cases}
    errors: dict[str, int] = {name: 0 for name in cases}
    try:
        for round_number in range(rounds):
            names = list(cases) if round_number % 2 == 0 else list(reversed(cases))
            for name in names:
                before = resource.getrusage(resource.RUSAGE_SELF)
                result = await client(["latency", *cases[name], *common])
                after = resource.getrusage(resource.RUSAGE_SELF)
                # Over HTTP the server is this process: its CPU while the agent ran, per call.
                used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
                server_cpu[name] += used
                calls_made[name] += calls + 20
                latencies[name].extend(result["net_latencies_ms"])
                full[name].extend(result["latencies_ms"])
                errors[name] += result["errors"]
    finally:
        embedded.close_session(ide)
        embedded.close_session(worker)
        await bare_host.stop()
        await embedded.stop()
        services.close()
    return {
        name: {
            **summary(values),
            "p50_with_client_check_ms": percentile(full[name], 50),
            "p95_with_client_check_ms": percentile(full[name], 95),
            "errors": errors[name],
            **(
                {"server_cpu_ms_per_call": 1000 * server_cpu[name] / calls_made[name]}
                if name.startswith("http")
                else {}
            ),
        }
        for name, values in latencies.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--calls", type=int, default=300, help="timed calls per client run (after 20 warm-ups)"
    )
    parser.add_argument("--rounds", type=int, default=2, help="client runs per case, alternating the order")
    parser.add_argument(
        "--only", choices=("http", "stdio"), help="measure one transport; print its figures, no table rows"
    )
    args = parser.parse_args()
    with scratch_dir("latency") as tmp:
        root = make_project(tmp / "project", tasks=20)
        results = asyncio.run(measure(root, args.calls, args.rounds, args.only))
    for name, figures in results.items():
        say(
            f"{name:22s} p50 {fmt_ms(figures['p50_ms']):>9s}  p95 {fmt_ms(figures['p95_ms']):>9s}  "
            f"(with the client's output-schema check: p50 {fmt_ms(figures['p50_with_client_check_ms'])}, "
            f"p95 {fmt_ms(figures['p95_with_client_check_ms'])}; {figures['calls']} calls, "
            f"{figures['errors']} errors)"
            + (
                f"; server CPU {fmt_ms(figures['server_cpu_ms_per_call'])} per call"
                if "server_cpu_ms_per_call" in figures
                else ""
            )
        )
    if args.only is not None:
        ralph, bare = results[f"{args.only} ralph get_task"], results[f"{args.only} bare get_task"]
        ratio = ralph["p50_ms"] / bare["p50_ms"]
        say(f"{args.only} get_task ratio {ratio:.2f}×")
        return
    ralph_read, bare_read = results["http ralph get_task"], results["http bare get_task"]
    ralph_write = results["http ralph flag"]
    ratio = ralph_read["p50_ms"] / bare_read["p50_ms"]
    ratio_write = ralph_write["p50_ms"] / bare_read["p50_ms"]
    no_errors = all(figures["errors"] == 0 for figures in results.values())
    emit(
        Row(
            key="http_tool_call",
            what="tools/call over embedded HTTP (legacy 2025-11-25), p50 / p95",
            measured=(
                f"get_task {fmt_ms(ralph_read['p50_ms'])} / {fmt_ms(ralph_read['p95_ms'])}; "
                f"flag {fmt_ms(ralph_write['p50_ms'])} / {fmt_ms(ralph_write['p95_ms'])}"
            ),
            target=f"p50 ≤ {TARGET_P50_MS:g} ms and ≤ {TARGET_RATIO}× bare",
            reference=f"bare get_task {fmt_ms(bare_read['p50_ms'])} / {fmt_ms(bare_read['p95_ms'])}",
            ratio=f"{ratio:.2f}× (flag {ratio_write:.2f}×)",
            passed=no_errors
            and ralph_read["p50_ms"] <= TARGET_P50_MS
            and ratio <= TARGET_RATIO
            and ralph_write["p50_ms"] <= TARGET_P50_MS,
            figures={**results, "ratio_get_task": ratio, "ratio_flag": ratio_write},
            note=(
                f"server CPU per call: get_task {fmt_ms(ralph_read['server_cpu_ms_per_call'])}, flag "
                f"{fmt_ms(ralph_write['server_cpu_ms_per_call'])}, "
                f"bare {fmt_ms(bare_read['server_cpu_ms_per_call'])}; "
                f"with the Python client's output-schema check: get_task p50 "
                f"{fmt_ms(ralph_read['p50_with_client_check_ms'])}, bare "
                f"{fmt_ms(bare_read['p50_with_client_check_ms'])}"
                + ("" if no_errors else "; SOME CALLS FAILED")
            ),
        )
    )
    stdio_read, stdio_bare = results["stdio ralph get_task"], results["stdio bare get_task"]
    stdio_write = results["stdio ralph flag"]
    emit(
        Row(
            key="stdio_tool_call",
            what="tools/call over stdio (legacy 2025-11-25), p50 / p95",
            measured=(
                f"get_task {fmt_ms(stdio_read['p50_ms'])} / {fmt_ms(stdio_read['p95_ms'])}; "
                f"flag {fmt_ms(stdio_write['p50_ms'])} / {fmt_ms(stdio_write['p95_ms'])}"
            ),
            target="— (reported)",
            reference=f"bare get_task {fmt_ms(stdio_bare['p50_ms'])} / {fmt_ms(stdio_bare['p95_ms'])}",
            ratio=f"{stdio_read['p50_ms'] / stdio_bare['p50_ms']:.2f}×",
            passed=None,
            figures={"ratio_get_task": stdio_read["p50_ms"] / stdio_bare["p50_ms"]},
        )
    )


if __name__ == "__main__":
    main()
