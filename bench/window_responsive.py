"""Row 12: the window stays responsive while a loop runs and another process writes signals.

The window (offscreen, built with `ralph_desk.app.build_window` in the app's qasync event loop,
following changes as it does, the Dashboard shown) runs the real `LoopRunner` over K tasks of a git
project with the command-template agent, the tests' stand-in (`tests/support/stand_in_agent.py`):
each session writes a file and calls `done`, so every iteration has git work, file hashing and
post-processing. Meanwhile another process records 50 `flag` signals a second (on a draft task of
their own) through the services. A heartbeat timer on the GUI thread ticks every 5 ms; the figure
is the longest gap between two ticks beyond the interval: the longest time the window could not
answer a click or repaint.

    python bench/window_responsive.py [--tasks 12] [--rate 50] [--pane dashboard]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from _common import (
    PYTHON,
    REPO,
    Row,
    emit,
    env_for_children,
    fmt_ms,
    guard_pyside_refcounts,
    make_project,
    say,
    scratch_dir,
    stall_figures,
)

TARGET_MS = 50.0
STAND_IN = REPO / "tests" / "support" / "stand_in_agent.py"
# Each session writes a file (git work for the loop) and calls `done`.
CALLS = (
    'Write={"file_path": "notes/{session_id}.txt", "content": "what the session changed"}',
    'done={"summary": "wrote a note: the benchmark\'s stand-in agent"}',
)
HEARTBEAT_MS = 5


def writer(root: Path, rate: float) -> None:
    """The other process: record `flag` signals at `rate` a second until its stdin closes."""
    import threading

    from ralph_desk.project import ProjectPaths
    from ralph_desk.services.container import Services

    services = Services.open(ProjectPaths.at(root))
    closed = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), closed.set()), daemon=True).start()
    # Flags on a draft task of their own: the loop never runs it, so its sessions' prompts stay the same.
    target = services.tasks.create("core", "backend", "What the other process writes to", status="draft").id
    print("ready", flush=True)
    written, start = 0, time.monotonic()
    try:
        while not closed.is_set():
            services.signals.record(
                target,
                "bench-writer",
                "flag",
                what=f"flag {written} from another process",
                severity="info",
                category="bug",
            )
            written += 1
            closed.wait(max(0.0, start + written / rate - time.monotonic()))
    finally:
        print(f"wrote {written}", flush=True)
        services.close()


async def run_loop(root: Path, tasks: int, pane: str, rate: float) -> dict[str, Any]:
    from PySide6.QtCore import QSettings, QTimer

    from ralph_desk.app import build_window
    from ralph_desk.loop.build import RunOptions, build_runner
    from ralph_desk.loop.model import LoopSettings
    from ralph_desk.mcp_server.embedded import EmbeddedMcp
    from ralph_desk.project import ProjectPaths
    from ralph_desk.services.container import Services

    services = Services.open(ProjectPaths.at(root))
    embedded = EmbeddedMcp(services)
    await embedded.start()
    settings = QSettings(
        str(Path(tempfile.mkdtemp(prefix="ralph-bench-settings-")) / "s.ini"), QSettings.Format.IniFormat
    )
    window = build_window(services, settings=settings, use_tray=False, issuer=embedded)
    window.resize(1400, 900)
    window.show()
    window.show_pane(pane)
    calls = [word for call in CALLS for word in ("--call", call)]
    template = shlex.join([PYTHON, "-I", str(STAND_IN), "{prompt_file}", "{mcp_config}", *calls])
    loop_settings = LoopSettings(
        agent="command", agent_command=template, session_timeout_s=120, allow_edits=True
    )
    runner = build_runner(services, embedded, loop_settings, RunOptions(exit_when_idle=True))

    ticks: list[float] = []
    heartbeat = QTimer()
    heartbeat.setInterval(HEARTBEAT_MS)
    heartbeat.timeout.connect(lambda: ticks.append(time.perf_counter()))
    other = subprocess.Popen(
        [PYTHON, __file__, "--writer", str(root), "--rate", str(rate)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env_for_children(),
    )
    assert other.stdout is not None and other.stdin is not None
    assert other.stdout.readline().strip() == "ready"
    for _ in range(20):  # let the window settle after its first reads
        await asyncio.sleep(0.01)
    heartbeat.start()
    start = time.perf_counter()
    try:
        status = await runner.run()
    finally:
        elapsed = time.perf_counter() - start
        heartbeat.stop()
        other.stdin.close()
        written = other.stdout.read().strip()
        other.wait(timeout=30)
        if window.controller is not None:
            window.controller.feed.stop()
        window.close()
        await embedded.stop()
        services.close()
    return {
        "iterations": status.iteration,
        "seconds": elapsed,
        **stall_figures(ticks, start, HEARTBEAT_MS, TARGET_MS),
        "writer": written,
    }


def measure(root: Path, tasks: int, pane: str, rate: float) -> dict[str, Any]:
    import qasync

    from ralph_desk.app import prepare_application
    from ralph_desk.gui.child_watch import pidfd_child_watcher

    app = prepare_application(["ralph-desk-bench"])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop, pidfd_child_watcher(loop):  # as the app runs it
        figures: dict[str, Any] = loop.run_until_complete(run_loop(root, tasks, pane, rate))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tasks", type=int, default=12)
    parser.add_argument("--rate", type=float, default=50.0, help="signals a second the other process writes")
    parser.add_argument("--pane", default="dashboard", help="the pane shown while the loop runs")
    parser.add_argument("--label", default="", help="a note for the row (e.g. which code was measured)")
    parser.add_argument("--writer", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.writer is not None:
        writer(args.writer, args.rate)
        return
    guard_pyside_refcounts()
    env_for_children()
    with scratch_dir("responsive") as tmp:
        root = make_project(tmp / "repo", tasks=args.tasks, git=True)
        figures = measure(root, args.tasks, args.pane, args.rate)
    say(
        f"{figures['iterations']} sessions in {figures['seconds']:.1f} s with git work, {figures['writer']} "
        f"signals from another process; {figures['ticks']} heartbeats of {HEARTBEAT_MS} ms"
    )
    say(
        f"stalls beyond the heartbeat: longest {fmt_ms(figures['longest_stall_ms'])}, p99 "
        f"{fmt_ms(figures['p99_stall_ms'])}, median {fmt_ms(figures['p50_stall_ms'])}; "
        f"{figures['stalls_over_target']} over {TARGET_MS:.0f} ms; the longest began "
        f"{figures['longest_stall_after_s']:.2f} s into the run"
    )
    longest = figures["longest_stall_ms"]
    emit(
        Row(
            key="window_responsive",
            what="GUI thread's longest stall while a loop runs with git work and 50 signals/s arrive",
            measured=fmt_ms(longest),
            target=f"≤ {TARGET_MS:.0f} ms",
            passed=longest <= TARGET_MS,
            figures=figures,
            note=args.label,
        )
    )


if __name__ == "__main__":
    main()
