"""Many agents at once: 12 tasks of a ~5 s agent with `parallel` 1, 2 and 4, and the server's p95 under 4.

The real `LoopRunner` runs a git project's tasks with the command-template agent pointing at the
tests' stand-in agent, which holds about 5 s (as a session's model turns would), then calls
`flag` CALLS times and `done` over HTTP with its session's credential. Each `parallel` gets a
fresh project; its wall time is from the loop's start to its end. The embedded server logs every
tool call with its duration (the seed-003 call log); the p95 of those durations in the parallel-4
run, whose first four agents meet before they call (so that four call at once), is the server's
latency with four agents at once.

    python bench/parallel.py [--tasks 12] [--hold 5] [--calls 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import time
from pathlib import Path
from typing import Any

from _common import (
    PYTHON,
    REPO,
    Row,
    emit,
    env_for_children,
    fmt_ms,
    make_project,
    percentile,
    say,
    scratch_dir,
)

TARGET_RATIO = 0.35
STAND_IN = REPO / "tests" / "support" / "stand_in_agent.py"
RENDEZVOUS_ENV = "STAND_IN_RENDEZVOUS"
DONE_CALL = 'done={"summary": "the benchmark\'s stand-in agent is done"}'
FLAG = {"what": "a parallel benchmark flag", "severity": "warning", "category": "performance"}


def agent_template(calls: int) -> str:
    """The stand-in agent as a command template: `calls` × flag, then done."""
    words = [PYTHON, "-I", str(STAND_IN), "{prompt_file}", "{mcp_config}"]
    for _ in range(calls):
        words += ["--call", f"flag={json.dumps(FLAG)}"]
    return shlex.join([*words, "--call", DONE_CALL])


async def run_once(root: Path, parallel: int, calls: int, call_log: Path) -> dict[str, Any]:
    from ralph_desk.domain.enums import TaskStatus
    from ralph_desk.loop.build import RunOptions, build_runner
    from ralph_desk.loop.model import LoopSettings
    from ralph_desk.mcp_server.embedded import EmbeddedMcp
    from ralph_desk.project import ProjectPaths, update_config
    from ralph_desk.services.container import Services

    paths = ProjectPaths.at(root)
    update_config(paths, review_gate=False)
    services = Services.open(paths)
    embedded = EmbeddedMcp(services, call_log=call_log)
    await embedded.start()
    settings = LoopSettings(
        agent="command",
        agent_command=agent_template(calls),
        session_timeout_s=300,
        max_iterations=None,
        max_cost_usd=None,
        parallel=parallel,
    )
    try:
        runner = build_runner(services, embedded, settings, RunOptions(exit_when_idle=True))
        start = time.perf_counter()
        status = await runner.run()
        wall_s = time.perf_counter() - start
        done = services.tasks.count_by_status().get(TaskStatus.DONE.value, 0)
    finally:
        await embedded.stop()
        services.close()
    return {"parallel": parallel, "wall_s": wall_s, "sessions": status.iteration, "done": done}


def call_durations(call_log: Path) -> list[float]:
    """The durations (ms) of the logged tool calls."""
    lines = call_log.read_text(encoding="utf-8").splitlines() if call_log.exists() else []
    return [float(json.loads(line)["duration_ms"]) for line in lines if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tasks", type=int, default=12)
    parser.add_argument("--hold", type=float, default=5.0, help="seconds each agent holds (its 'model time')")
    parser.add_argument("--calls", type=int, default=20, help="flag calls per agent")
    args = parser.parse_args()
    env_for_children()
    results: dict[int, dict[str, Any]] = {}
    latencies: list[float] = []
    with scratch_dir("parallel") as tmp:
        for parallel in (1, 2, 4):
            root = make_project(tmp / f"repo-{parallel}", tasks=args.tasks, git=True)
            meet = min(4, args.tasks) if parallel == 4 else 1
            os.environ[RENDEZVOUS_ENV] = f"{tmp / f'arrivals-{parallel}'}:{meet}:{args.hold}"
            log = tmp / f"calls-{parallel}.jsonl"
            results[parallel] = asyncio.run(run_once(root, parallel, args.calls, log))
            say(
                f"parallel {parallel}: {results[parallel]['sessions']} sessions, {results[parallel]['done']} "
                f"tasks done in {results[parallel]['wall_s']:.1f} s"
            )
            if parallel == 4:
                latencies = call_durations(log)
    ratio = results[4]["wall_s"] / results[1]["wall_s"]
    emit(
        Row(
            key="parallel_wall",
            what=f"{args.tasks} tasks of a ~{args.hold:g} s agent, wall time parallel 1 / 2 / 4",
            measured=" / ".join(f"{results[n]['wall_s']:.1f} s" for n in (1, 2, 4)),
            target=f"parallel 4 ≤ {TARGET_RATIO}× parallel 1",
            reference=f"parallel 1 {results[1]['wall_s']:.1f} s",
            ratio=f"{ratio:.2f}×",
            passed=ratio <= TARGET_RATIO and all(results[n]["done"] == args.tasks for n in (1, 2, 4)),
            figures={str(n): results[n] for n in (1, 2, 4)},
        )
    )
    emit(
        Row(
            key="parallel_p95",
            what="embedded server tools/call with 4 agents at once, p50 / p95 (server side)",
            measured=f"{fmt_ms(percentile(latencies, 50))} / {fmt_ms(percentile(latencies, 95))}",
            target="— (reported)",
            figures={"calls": len(latencies), "p95_ms": percentile(latencies, 95)},
        )
    )


if __name__ == "__main__":
    main()
