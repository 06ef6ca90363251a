"""Row 5: the loop's own cost per iteration, not counting the agent process's run time.

The real `LoopRunner` runs K tasks of a git project with the command-template agent pointing at
the tests' stand-in agent (`tests/support/stand_in_agent.py`), a stdlib-only program that reads the
session's MCP config, writes a file, calls `done` over HTTP with the session's credential and exits —
so each iteration goes through everything a real one does: planning, the task's git worktree and
branch, the session's credential and files, the prompt, the process, reading its output, git and
fingerprint checks, the session's commit on the task branch, post-processing a real `done` (the task
goes to review), the transcript and the session record. The same agent command is also run standalone (same
pipes, same server, its own session on a draft task) before and after the loop; its mean wall time
is subtracted from the loop's mean iteration time.

    python bench/loop_overhead.py [--tasks 20]
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
    median,
    ms,
    say,
    scratch_dir,
)

TARGET_MS = 150.0
STANDALONE_RUNS = 10
STAND_IN = REPO / "tests" / "support" / "stand_in_agent.py"
DONE_CALL = 'done={"summary": "one file written: the benchmark\'s stand-in agent"}'
WRITE_CALL = 'Write={"file_path": "bench-note.txt", "content": "written by the benchmark\'s agent\\n"}'


def agent_argv(prompt_file: str, mcp_config: str) -> list[str]:
    """The stand-in agent calling `done` (no model API), as a command template or a command."""
    return [PYTHON, "-I", str(STAND_IN), prompt_file, mcp_config, "--call", WRITE_CALL, "--call", DONE_CALL]


async def run_agent(argv: list[str], cwd: Path) -> float:
    """Seconds to run the agent as the runner runs it (pipes, own session), reading all it prints."""
    start = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env={**os.environ},
        start_new_session=True,
    )
    _out, err = await process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"the agent failed: {err.decode()[-1000:]}")
    return time.perf_counter() - start


async def measure(root: Path, tasks: int) -> dict[str, Any]:
    from ralph_desk.domain.enums import Recipe, TaskStatus
    from ralph_desk.domain.session import SessionContext
    from ralph_desk.loop.agents.base import mcp_config
    from ralph_desk.loop.build import RunOptions, build_runner
    from ralph_desk.loop.model import EventKind, LiveEvent, LoopSettings
    from ralph_desk.mcp_server.embedded import EmbeddedMcp
    from ralph_desk.project import ProjectPaths
    from ralph_desk.services.container import Services

    services = Services.open(ProjectPaths.at(root))
    scratch = services.tasks.create(
        "core", "backend", "Scratch task for standalone agent runs", status="draft"
    )
    embedded = EmbeddedMcp(services)
    await embedded.start()
    template = shlex.join(agent_argv("{prompt_file}", "{mcp_config}"))
    settings = LoopSettings(
        agent="command", agent_command=template, session_timeout_s=120, stuck_threshold=3, max_iterations=None
    )

    async def standalone(runs: int) -> list[float]:
        times: list[float] = []
        for number in range(runs):
            endpoint = embedded.open_session(
                SessionContext(
                    recipe=Recipe.TASK_EXECUTION,
                    task_id=scratch.id,
                    session_id=f"bench-standalone-{len(times)}-{time.monotonic_ns()}",
                    discipline="backend",
                )
            )
            config = root / ".ralph" / "mcp" / f"standalone-{number}.mcp.json"
            config.write_text(json.dumps(mcp_config(endpoint, None)))
            prompt = config.with_suffix(".prompt.md")
            prompt.write_text("# Standalone run\n")
            times.append(await run_agent(agent_argv(str(prompt), str(config)), root))
            embedded.close_session(endpoint)
        return times

    events: list[tuple[float, LiveEvent]] = []
    in_loop: list[float] = []
    in_git: list[float] = []
    from ralph_desk.loop import branches

    def timed(call: Any) -> Any:  # the review desk's git work: the task's worktree, catching up, the commit
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return call(*args, **kwargs)
            finally:
                in_git.append(time.perf_counter() - start)

        return wrapper

    branches.prepare = timed(branches.prepare)  # type: ignore[method-assign]
    branches.commit = timed(branches.commit)  # type: ignore[method-assign]
    try:
        before = await standalone(STANDALONE_RUNS)
        runner = build_runner(services, embedded, settings, RunOptions(exit_when_idle=True))
        runner.subscribe(lambda event: events.append((time.perf_counter(), event)))
        run_process = runner.processes.run

        async def timed_process(*args: Any, **kwargs: Any) -> Any:  # the agent's wall time inside the loop
            start = time.perf_counter()
            try:
                return await run_process(*args, **kwargs)
            finally:
                in_loop.append(time.perf_counter() - start)

        runner.processes.run = timed_process  # type: ignore[method-assign]
        start = time.perf_counter()
        cpu_start = time.process_time()
        status = await runner.run()
        loop_s = time.perf_counter() - start
        loop_cpu_s = time.process_time() - cpu_start
        after = await standalone(STANDALONE_RUNS)
        counts = services.tasks.count_by_status()
        done = counts.get(TaskStatus.DONE.value, 0) + counts.get(TaskStatus.IN_REVIEW.value, 0)
        commits = sum(
            1 for session in services.sessions.list(limit=1000) if session.head_after != session.head_before
        )
    finally:
        await embedded.stop()
        services.close()
    iterations = status.iteration
    agent = before + after
    starts = [at for at, event in events if event.kind is EventKind.SESSION_STARTED]
    ends = [at for at, event in events if event.kind is EventKind.SESSION_ENDED]
    between = [ms(starts[i + 1] - ends[i]) for i in range(len(ends) - 1)]
    per_iteration = loop_s / iterations
    agent_mean = sum(agent) / len(agent)
    return {
        "tasks": tasks,
        "iterations": iterations,
        "done": done,
        "sessions_committed": commits,
        "loop_s": loop_s,
        "per_iteration_ms": ms(per_iteration),
        "agent_standalone_mean_ms": ms(agent_mean),
        "agent_standalone_median_ms": median([ms(value) for value in agent]),
        "overhead_ms": ms(per_iteration - agent_mean),
        "agent_in_loop_mean_ms": ms(sum(in_loop) / len(in_loop)),
        "worktree_and_commit_mean_ms": ms(sum(in_git) / iterations),
        "outside_process_mean_ms": ms(per_iteration - sum(in_loop) / len(in_loop)),
        "between_sessions_median_ms": median(between) if between else float("nan"),
        "loop_process_cpu_per_iteration_ms": ms(loop_cpu_s / iterations),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tasks", type=int, default=20)
    args = parser.parse_args()
    env_for_children()  # the agent runs with this environment's Python
    with scratch_dir("loop") as tmp:
        root = make_project(tmp / "repo", tasks=args.tasks, git=True)
        figures = asyncio.run(measure(root, args.tasks))
    say(
        f"{figures['iterations']} iterations ({figures['done']} tasks done or in review, "
        f"{figures['sessions_committed']} sessions committed) in {figures['loop_s']:.2f} s: "
        f"{fmt_ms(figures['per_iteration_ms'])} per iteration"
    )
    say(
        f"agent standalone: mean {fmt_ms(figures['agent_standalone_mean_ms'])}, median "
        f"{fmt_ms(figures['agent_standalone_median_ms'])} ({2 * STANDALONE_RUNS} runs)"
    )
    say(
        f"inside the loop: the agent process {fmt_ms(figures['agent_in_loop_mean_ms'])}, everything "
        f"else {fmt_ms(figures['outside_process_mean_ms'])}, of which the task's worktree and commit "
        f"{fmt_ms(figures['worktree_and_commit_mean_ms'])}; from a session's end to the next one's "
        f"start {fmt_ms(figures['between_sessions_median_ms'])} (median); CPU of this process (loop and "
        f"server) {fmt_ms(figures['loop_process_cpu_per_iteration_ms'])} per iteration"
    )
    ok = figures["done"] >= figures["tasks"] and figures["iterations"] == figures["tasks"]
    emit(
        Row(
            key="loop_overhead",
            what="loop overhead per iteration (agent's own run time subtracted)",
            measured=fmt_ms(figures["overhead_ms"]),
            target=f"≤ {TARGET_MS:g} ms",
            reference=(
                f"iteration {fmt_ms(figures['per_iteration_ms'])} − agent "
                f"{fmt_ms(figures['agent_standalone_mean_ms'])}"
            ),
            passed=ok and figures["overhead_ms"] <= TARGET_MS,
            figures=figures,
            note=(
                f"{figures['iterations']} iterations, each in its task's worktree with a file written, "
                "committed on the task branch and a real `done` (in review); time outside the agent process "
                f"inside the loop: {fmt_ms(figures['outside_process_mean_ms'])} (worktree and commit "
                f"{fmt_ms(figures['worktree_and_commit_mean_ms'])}); loop+server CPU "
                f"{fmt_ms(figures['loop_process_cpu_per_iteration_ms'])}/iteration"
                + ("" if ok else "; NOT EVERY TASK WAS DONE")
            ),
        )
    )


if __name__ == "__main__":
    main()
