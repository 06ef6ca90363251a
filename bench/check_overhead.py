"""The loop's own cost of running a task's checks after its `done`, beyond the checks' own run time.

The real `LoopRunner` runs K tasks of a git project with the stand-in agent (which writes a file and
calls `done`); the project has one required check (a short Python program). Around the loop's checks
gate (`loop.check_gate.after_done`) the wall time is taken, and the checks' own run time (each run's
`duration_s`: the shell started, run and ended, as the runner measures it) is subtracted: what is left
is the loop's overhead — the run records written, the log file made, the live events, the verdict.

    python bench/check_overhead.py [--tasks 12]
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import time
from pathlib import Path
from typing import Any

from _common import (
    PYTHON,
    Row,
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
from loop_overhead import agent_argv

TARGET_MS = 100.0


async def measure(root: Path) -> dict[str, Any]:
    from ralph_desk.domain.checks import Check
    from ralph_desk.loop import check_gate
    from ralph_desk.loop.build import RunOptions, build_runner
    from ralph_desk.loop.model import LoopSettings
    from ralph_desk.mcp_server.embedded import EmbeddedMcp
    from ralph_desk.project import ProjectPaths
    from ralph_desk.services.container import Services

    services = Services.open(ProjectPaths.at(root))
    embedded = EmbeddedMcp(services)
    await embedded.start()
    check = Check(name="tests", run=f"{shlex.quote(PYTHON)} -c \"print('1 passed')\"", timeout_s=60)
    settings = LoopSettings(
        agent="command",
        agent_command=shlex.join(agent_argv("{prompt_file}", "{mcp_config}")),
        session_timeout_s=120,
        max_iterations=None,
        checks=(check,),
    )
    overheads: list[float] = []
    check_times: list[float] = []
    gate = check_gate.after_done

    def timed(parts: Any, attempt: Any, decision: Any, tip: Any) -> Any:
        start = time.perf_counter()
        try:
            return gate(parts, attempt, decision, tip)
        finally:
            wall = time.perf_counter() - start
            runs = services.checks.for_session(attempt.plan.session_id)
            own = sum(run.duration_s or 0.0 for run in runs)
            check_times.append(own)
            overheads.append(wall - own)

    check_gate.after_done = timed  # type: ignore[assignment]
    try:
        runner = build_runner(services, embedded, settings, RunOptions(exit_when_idle=True))
        status = await runner.run()
        passed = sum(
            1
            for task in services.tasks.list()
            if all(not run.failing for run in services.checks.latest(task.id))
        )
    finally:
        check_gate.after_done = gate  # type: ignore[assignment]
        await embedded.stop()
        services.close()
    values = [ms(value) for value in overheads]
    return {
        "sessions": status.iteration,
        "checked": len(values),
        "tasks_passing": passed,
        "overhead_median_ms": median(values),
        "overhead_p95_ms": percentile(values, 95),
        "overhead_max_ms": max(values),
        "check_run_median_ms": median([ms(value) for value in check_times]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tasks", type=int, default=12)
    args = parser.parse_args()
    env_for_children()
    with scratch_dir("checks") as tmp:
        root = make_project(tmp / "repo", tasks=args.tasks, git=True)
        figures = asyncio.run(measure(root))
    say(
        f"{figures['checked']} sessions checked: the loop's own cost median "
        f"{fmt_ms(figures['overhead_median_ms'])}, p95 {fmt_ms(figures['overhead_p95_ms'])}, max "
        f"{fmt_ms(figures['overhead_max_ms'])}; the check itself {fmt_ms(figures['check_run_median_ms'])} "
        "(median)"
    )
    ok = figures["checked"] == args.tasks
    emit(
        Row(
            key="check_overhead",
            what="the loop's own cost of a session's checks (the checks' run time subtracted)",
            measured=fmt_ms(figures["overhead_max_ms"]) + " max",
            target=f"≤ {TARGET_MS:g} ms per session",
            reference=(
                f"median {fmt_ms(figures['overhead_median_ms'])}, "
                f"check {fmt_ms(figures['check_run_median_ms'])}"
            ),
            passed=ok and figures["overhead_max_ms"] <= TARGET_MS,
            figures=figures,
            note=f"{figures['checked']} sessions, one required check each"
            + ("" if ok else "; NOT ALL CHECKED"),
        )
    )


if __name__ == "__main__":
    main()
