"""Row 1: `ralph-desk mcp` over stdio, spawn → first tool answered, against the bare server spawned alike.

Each run starts the process with pipes, writes the `initialize` request at once (the server reads
it when it is ready) and times the answer's line on stdout; then, as a client does, it sends
`initialized` and `tools/list`, and last a first `get_task` call, timing each answer. The first
call is the row (every part of the server is loaded by then); `initialize` and `tools/list` are
reported beside it, and so is the CPU each server had used by its first answer (from /proc; less
moved by a loaded machine than the clock). ralph's server answers the handshake and the listings
before it has opened the database, which a client that lets a model turn pass before its first call
does not wait for. Runs of the servers alternate, after one warm-up each, so that drift on this
2-core machine hits all alike.

    python bench/stdio_startup.py [--runs 9]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
from dataclasses import dataclass
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
    median,
    ms,
    say,
    scratch_dir,
)

TARGET_RATIO = 1.5
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
FIRST_CALL = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "tools/call",
    "params": {"name": "get_task", "arguments": {"id": 1}},
}


@dataclass
class Spawn:
    """One spawn: seconds to the `initialize`, `tools/list` and first `tools/call` answers, and CPU used.

    `cpu_first` is the CPU the server had used when its first call was answered (from /proc; NaN
    elsewhere), `cpu` what it used in all, its exit included.
    """

    initialize: float
    tools_list: float
    first_call: float
    cpu_first: float
    cpu: float
    tools: int


def _cpu_so_far(pid: int) -> float:
    """Seconds of CPU (user + system) process `pid` has used so far; NaN without /proc."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _answer(process: subprocess.Popen[bytes], request_id: int) -> dict[str, Any]:
    assert process.stdout is not None
    while True:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError(
                f"the server exited before answering request {request_id} (code {process.wait()})"
            )
        message: dict[str, Any] = json.loads(line)
        if message.get("id") == request_id:
            if "result" not in message:
                raise RuntimeError(f"request {request_id} failed: {message}")
            return message


def spawn(argv: list[str], env: dict[str, str]) -> Spawn:
    """Spawn `argv`, ask `initialize` at once, then `tools/list` as a client does; time both answers."""
    start = time.perf_counter()
    process = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    assert process.stdin is not None
    try:
        process.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
        process.stdin.flush()
        _answer(process, 1)
        initialized = time.perf_counter() - start
        process.stdin.write((json.dumps(INITIALIZED) + "\n" + json.dumps(TOOLS_LIST) + "\n").encode())
        process.stdin.flush()
        tools = _answer(process, 2)["result"]["tools"]
        listed = time.perf_counter() - start
        process.stdin.write((json.dumps(FIRST_CALL) + "\n").encode())
        process.stdin.flush()
        called = _answer(process, 3)["result"]
        first_call = time.perf_counter() - start
        cpu_first = _cpu_so_far(process.pid)
        if called.get("isError"):
            raise RuntimeError(f"the first call failed: {called}")
    finally:
        process.stdin.close()
        cpu = float("nan")
        try:
            _, status, usage = os.wait4(process.pid, 0)
            process.returncode = os.waitstatus_to_exitcode(status)
            cpu = usage.ru_utime + usage.ru_stime
        except ChildProcessError:
            pass
    return Spawn(initialized, listed, first_call, cpu_first, cpu, len(tools))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    env = env_for_children()
    with scratch_dir("stdio") as tmp:
        root = make_project(tmp / "project", tasks=5)
        commands = {
            "ralph": [RALPH_DESK, "mcp", "--root", str(root)],
            "bare": [PYTHON, str(BENCH_DIR / "bare_server.py"), "--db", str(db_file(root))],
            "floor": [
                PYTHON,
                str(BENCH_DIR / "bare_server.py"),
                "--db",
                str(db_file(root)),
                "--import-sqlalchemy",
            ],
        }
        for argv in commands.values():  # warm-up: page cache, .pyc files
            spawn(argv, env)
        runs: dict[str, list[Spawn]] = {name: [] for name in commands}
        for run in range(args.runs):
            for name in list(commands) if run % 2 == 0 else list(reversed(commands)):
                runs[name].append(spawn(commands[name], env))
    figures: dict[str, Any] = {"runs": args.runs}
    for name, spawns in runs.items():
        init = [ms(s.initialize) for s in spawns]
        listed = [ms(s.tools_list) for s in spawns]
        called = [ms(s.first_call) for s in spawns]
        cpu_first = [ms(s.cpu_first) for s in spawns]
        cpu = [ms(s.cpu) for s in spawns]
        say(f"{name:5s} spawn→initialize ms: " + " ".join(f"{v:.0f}" for v in init))
        say(
            f"{name:5s} spawn→tools/list ms: "
            + " ".join(f"{v:.0f}" for v in listed)
            + f"  ({spawns[0].tools} tools)"
        )
        say(f"{name:5s} spawn→first call ms: " + " ".join(f"{v:.0f}" for v in called))
        say(f"{name:5s} CPU to first call:   " + " ".join(f"{v:.0f}" for v in cpu_first))
        say(f"{name:5s} process CPU ms:      " + " ".join(f"{v:.0f}" for v in cpu))
        figures[name] = {
            "initialize_ms": init,
            "tools_list_ms": listed,
            "cpu_ms": cpu,
            "initialize_median_ms": median(init),
            "initialize_min_ms": min(init),
            "tools_list_median_ms": median(listed),
            "first_call_ms": called,
            "first_call_median_ms": median(called),
            "first_call_min_ms": min(called),
            "cpu_median_ms": median(cpu),
            "cpu_first_ms": cpu_first,
            "cpu_first_median_ms": median(cpu_first),
            "tools": spawns[0].tools,
        }
    ralph, bare, floor = figures["ralph"], figures["bare"], figures["floor"]
    ratio = ralph["initialize_median_ms"] / bare["initialize_median_ms"]
    figures["ratio"] = ratio
    figures["floor_ratio"] = floor["first_call_median_ms"] / bare["first_call_median_ms"]
    figures["ratio_min"] = ralph["initialize_min_ms"] / bare["initialize_min_ms"]
    figures["ratio_tools_list"] = ralph["tools_list_median_ms"] / bare["tools_list_median_ms"]
    figures["ratio_first_call"] = ralph["first_call_median_ms"] / bare["first_call_median_ms"]
    figures["ratio_cpu"] = ralph["cpu_median_ms"] / bare["cpu_median_ms"]
    figures["ratio_cpu_first"] = ralph["cpu_first_median_ms"] / bare["cpu_first_median_ms"]
    figures["load_average"] = os.getloadavg()[0]
    say(
        f"ratios ralph/bare: initialize median {ratio:.2f}×, min {figures['ratio_min']:.2f}×; "
        f"tools/list {figures['ratio_tools_list']:.2f}×; first call {figures['ratio_first_call']:.2f}×; "
        f"CPU to first call {figures['ratio_cpu_first']:.2f}×; process CPU {figures['ratio_cpu']:.2f}× "
        f"(load average {figures['load_average']:.1f})"
    )
    say(
        f"floor: the bare server having imported SQLAlchemy's ORM answers its first call in "
        f"{fmt_ms(floor['first_call_median_ms'])}, {figures['floor_ratio']:.2f}× bare"
    )
    emit(
        Row(
            key="stdio_startup",
            what="`ralph-desk mcp` stdio: spawn → first `get_task` answered (median / min)",
            measured=f"{fmt_ms(ralph['first_call_median_ms'])} / {fmt_ms(ralph['first_call_min_ms'])}",
            target=f"≤ {TARGET_RATIO}× bare",
            reference=(
                f"bare MCPServer {fmt_ms(bare['first_call_median_ms'])} / "
                f"{fmt_ms(bare['first_call_min_ms'])}; "
                f"floor (bare + SQLAlchemy ORM import) {fmt_ms(floor['first_call_median_ms'])}"
            ),
            ratio=f"{figures['ratio_first_call']:.2f}× (floor {figures['floor_ratio']:.2f}×)",
            passed=figures["ratio_first_call"] <= TARGET_RATIO,
            figures=figures,
            note=(
                f"CPU to first call {figures['ratio_cpu_first']:.2f}× bare, process CPU "
                f"{figures['ratio_cpu']:.2f}×; load average {figures['load_average']:.1f}"
            ),
        )
    )
    emit(
        Row(
            key="stdio_startup_handshake",
            what="… the same spawns: → initialize; → tools/list answered (median)",
            measured=f"{fmt_ms(ralph['initialize_median_ms'])}; {fmt_ms(ralph['tools_list_median_ms'])}",
            target="— (reported)",
            reference=f"bare {fmt_ms(bare['initialize_median_ms'])}; {fmt_ms(bare['tools_list_median_ms'])}",
            ratio=f"{ratio:.2f}×; {figures['ratio_tools_list']:.2f}×",
        )
    )


if __name__ == "__main__":
    main()
