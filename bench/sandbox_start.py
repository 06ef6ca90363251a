"""What the sandbox adds to a session's start (DESIGN §15): the policy made and bubblewrap set up.

In a git project with a task worktree, one program (`/bin/true`) is started and waited for R times bare,
and R times as a session starts it confined: the session's sandbox folder made, the policy built (the
project, toolchains and program shown, the credentials masked, Claude Code's home files placed), the
command wrapped by `bwrap`, run, and the folder removed. The two are paired run by run; the difference
is the sandbox's cost.

    python bench/sandbox_start.py [--runs 40]
"""

from __future__ import annotations

import argparse
import subprocess
import time
from pathlib import Path

from _common import Row, emit, fmt_ms, make_project, median, ms, percentile, say, scratch_dir

TARGET_MS = 50.0
PROGRAM = ["/bin/true"]


def _run(argv: list[str], env: dict[str, str] | None = None) -> None:
    subprocess.run(argv, env=env, check=True, stdin=subprocess.DEVNULL)


def measure(root: Path, runs: int) -> dict[str, float]:
    from ralph_desk.loop.agents.claude import ClaudeAdapter
    from ralph_desk.project import ProjectPaths
    from ralph_desk.project.confinement import SandboxRequest, confined, release
    from ralph_desk.sandbox import availability
    from ralph_desk.services.container import Services

    found = availability()
    if not found.confines:
        raise SystemExit(f"no sandbox on this computer: {found.reason}")
    services = Services.open(ProjectPaths.at(root))
    task = services.tasks.create("core", "backend", "Benchmark the sandbox")
    worktree = services.workspaces.prepare(task.id, task.title)
    assert worktree is not None
    admin = services.workspaces.git_of(worktree).git_dir
    services.close()
    added: list[float] = []
    for index in range(runs):
        started = time.perf_counter()
        _run(PROGRAM)
        bare = time.perf_counter() - started
        started = time.perf_counter()
        name = f"session-bench-{index}"
        request = SandboxRequest(
            name, worktree.path, writable=(admin,), home_files=ClaudeAdapter.home_files, network=True
        )
        wrapped = confined(ProjectPaths.at(root), list(PROGRAM), request, True, found)
        assert wrapped.confined
        _run(wrapped.argv, wrapped.environment({"PATH": "/usr/bin:/bin"}))
        release(ProjectPaths.at(root), name)
        added.append((time.perf_counter() - started) - bare)
    values = [ms(value) for value in added]
    return {"median_ms": median(values), "p95_ms": percentile(values, 95), "max_ms": max(values)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    with scratch_dir("sandbox") as tmp:
        root = make_project(tmp / "repo", tasks=1, git=True)
        figures = measure(root, args.runs)
    say(
        f"{args.runs} starts: the sandbox adds median {fmt_ms(figures['median_ms'])}, p95 "
        f"{fmt_ms(figures['p95_ms'])}, max {fmt_ms(figures['max_ms'])} to a session's start"
    )
    emit(
        Row(
            key="sandbox_start",
            what="what the sandbox adds to a session's start (policy, folder, bubblewrap)",
            measured=fmt_ms(figures["p95_ms"]) + " p95",
            target=f"≤ {TARGET_MS:g} ms",
            passed=figures["p95_ms"] <= TARGET_MS,
            figures=figures,
        )
    )


if __name__ == "__main__":
    main()
