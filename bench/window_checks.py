"""Row 12b: the window stays responsive while a check streams 10,000 lines of output.

The window (offscreen, built with `ralph_desk.app.build_window` in the app's qasync event loop, following
changes as it does) watches a real check run: a process printing LINES lines, flushing after each one (the
worst case: one piece of output per line), run by `CheckService.run` in a folder of a git project.

- `--view loop` (default): the Loop pane follows a session whose done runs the check; each piece of output
  reaches the pane as a CHECK_OUTPUT live event, paced and handed from the check's thread to the event loop
  exactly as the loop's checks gate does (`OutputPacer`, `call_soon_threadsafe`, the runner's listeners).
- `--view reviews`: the Reviews tab shows a task in review and the person clicks "Run checks again": the
  window's worker runs the check on its long thread and streams its output into the checks strip.

A heartbeat timer on the GUI thread ticks every 5 ms; the figure is the longest gap between two ticks beyond
the interval: the longest time the window could not answer a click or repaint.

    python bench/window_checks.py [--view loop|reviews] [--lines 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from _common import (
    PYTHON,
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
HEARTBEAT_MS = 5
LINE = "tests/test_tides.py::test_high_water[{n}] PASSED  [ {p:3d}%] the harbour model agrees to 0.01 m"


def check_command(lines: int, seconds: float) -> str:
    """A check printing `lines` lines, flushing each (a test runner's verbose output), over `seconds` (0: at
    once)."""
    pause = seconds / max(1, lines // 100)
    script = (
        "import sys, time\n"
        f"for n in range({lines}):\n"
        f"    sys.stdout.write({LINE!r}.format(n=n, p=100 * n // {lines}) + chr(10))\n"
        "    sys.stdout.flush()\n"
        f"    if {pause} and n % 100 == 99: time.sleep({pause})\n"
    )
    return f"{PYTHON} -c \"exec(bytes.fromhex('{script.encode().hex()}').decode())\""  # one shell line


def prepare(root: Path, lines: int, seconds: float) -> int:
    """A git project whose one check prints `lines` lines, and a task in review; the task's id."""
    from ralph_desk.demo_review import put_in_review
    from ralph_desk.project import ProjectPaths, update_config
    from ralph_desk.services.container import Services

    make_project(root, tasks=3, git=True)
    services = Services.open(ProjectPaths.at(root))
    try:
        update_config(
            services.paths, checks=[{"name": "tests", "run": check_command(lines, seconds), "timeout_s": 600}]
        )
        task = services.tasks.list()[0].id
        put_in_review(services, task, ({"src/tides.py": "HIGH = 1.2\n"}, "wrote the tides"))
        return task
    finally:
        services.close()


async def watch(root: Path, task: int, view: str, lines: int, spacing_s: float | None) -> dict[str, Any]:
    from PySide6.QtCore import QSettings, QTimer

    from ralph_desk.app import build_window
    from ralph_desk.domain.checks import Check, CheckPurpose
    from ralph_desk.gui.panes.inbox.pane import REVIEWS
    from ralph_desk.gui.panes.loop.wiring import LoopWiring
    from ralph_desk.loop.check_gate import OutputPacer
    from ralph_desk.loop.model import EventKind, LiveEvent
    from ralph_desk.project import ProjectPaths
    from ralph_desk.services.container import Services

    services = Services.open(ProjectPaths.at(root))
    settings = QSettings(
        str(Path(tempfile.mkdtemp(prefix="ralph-bench-settings-")) / "s.ini"), QSettings.Format.IniFormat
    )
    window = build_window(services, settings=settings, use_tray=False)
    window.resize(1400, 900)
    window.show()
    controller = window.controller
    assert controller is not None
    strip = window.inbox.reviews.detail.checks
    if view == "reviews":
        window.show_pane("inbox")
        window.inbox.show_tab(REVIEWS)
        while not (strip.isVisible() and strip.buttons):
            await asyncio.sleep(0.02)
    else:
        window.show_pane("loop")
    for _ in range(50):  # let the window settle after its first reads
        await asyncio.sleep(0.01)

    events = [0]
    ticks: list[float] = []
    heartbeat = QTimer()
    heartbeat.setInterval(HEARTBEAT_MS)
    heartbeat.timeout.connect(lambda: ticks.append(time.perf_counter()))
    heartbeat.start()
    start = time.perf_counter()
    if view == "reviews":
        strip.run_again.click()
        while strip.running:
            await asyncio.sleep(0.02)
        shown = strip.output.text()
    else:
        wiring = window.findChild(LoopWiring)
        assert wiring is not None
        loop = asyncio.get_running_loop()
        hear = wiring._on_event  # the runner's listener: what `LoopRunner.subscribe` is given
        session = "bench-session"
        hear(LiveEvent(EventKind.SESSION_STARTED, "Chart the tides", {"task_id": task}, session))
        hear(LiveEvent(EventKind.CHECK_STARTED, "", {"checks": ["tests"]}, session))
        check = Check.model_validate(services.workspaces.config().checks[0].model_dump())
        ended = threading.Event()

        def heard(name: str, text: str) -> None:  # as the checks gate emits, from the check's thread
            events[0] += 1
            event = LiveEvent(EventKind.CHECK_OUTPUT, text, {"check": name}, session)
            loop.call_soon_threadsafe(hear, event)

        output = OutputPacer(heard) if spacing_s is None else OutputPacer(heard, spacing_s)

        def run() -> None:
            try:
                services.checks.run(
                    [check],
                    root,
                    purpose=CheckPurpose.SESSION,
                    task_id=task,
                    session_id=session,
                    on_output=output.heard,
                )
                output.flush()
            finally:
                ended.set()

        threading.Thread(target=run, name="bench-check").start()
        while not ended.is_set():
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.05)  # the last pieces handed over
        hear(LiveEvent(EventKind.CHECK_ENDED, "checks: tests passed", {"passed": True}, session))
        panel = window.loop.stream.checks
        await asyncio.sleep(0.2)
        shown = panel.text()
    elapsed = time.perf_counter() - start
    for _ in range(20):
        await asyncio.sleep(0.01)
    heartbeat.stop()
    last_line = LINE.format(n=lines - 1, p=100 * (lines - 1) // lines)
    complete = shown.rstrip("\n").endswith(last_line)
    controller.feed.stop()
    controller.worker.shutdown()
    window.close()
    services.close()
    return {
        "view": view,
        "events": events[0],
        "spacing_s": spacing_s,
        "lines": lines,
        "seconds": elapsed,
        **stall_figures(ticks, start, HEARTBEAT_MS, TARGET_MS),
        "shown_lines": shown.count("\n"),
        "last_line_shown": complete,
        "load_average": os.getloadavg()[0],
    }


def measure(root: Path, task: int, view: str, lines: int, spacing_s: float | None) -> dict[str, Any]:
    import qasync

    from ralph_desk.app import prepare_application
    from ralph_desk.gui.child_watch import pidfd_child_watcher

    app = prepare_application(["ralph-desk-bench"])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop, pidfd_child_watcher(loop):  # as the app runs it
        figures: dict[str, Any] = loop.run_until_complete(watch(root, task, view, lines, spacing_s))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--view", choices=("loop", "reviews"), default="loop")
    parser.add_argument("--lines", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=0.0, help="print them over this long (0: at once)")
    parser.add_argument("--unpaced", action="store_true", help="loop: an event per piece (the code before)")
    parser.add_argument("--label", default="", help="a note for the row (e.g. which code was measured)")
    args = parser.parse_args()
    guard_pyside_refcounts()
    env_for_children()
    with scratch_dir("checks") as tmp:
        root = tmp / "repo"
        task = prepare(root, args.lines, args.seconds)
        figures = measure(root, task, args.view, args.lines, 0.0 if args.unpaced else None)
    say(
        f"{args.view}: a check printed {args.lines:,} lines in {figures['seconds']:.1f} s; the window showed "
        f"the last {figures['shown_lines']:,} (last line in: {figures['last_line_shown']}); "
        + (f"{figures['events']:,} output events; " if args.view == "loop" else "")
        + f"{figures['ticks']} heartbeats of {HEARTBEAT_MS} ms; load average {figures['load_average']:.1f}"
    )
    say(
        f"stalls beyond the heartbeat: longest {fmt_ms(figures['longest_stall_ms'])}, p99 "
        f"{fmt_ms(figures['p99_stall_ms'])}, median {fmt_ms(figures['p50_stall_ms'])}; "
        f"{figures['stalls_over_target']} over {TARGET_MS:.0f} ms; the longest began "
        f"{figures['longest_stall_after_s']:.2f} s in"
    )
    longest = figures["longest_stall_ms"]
    emit(
        Row(
            key=f"window_checks_{args.view}",
            what=f"GUI thread's longest stall while a check streams {args.lines:,} lines ({args.view}"
            + (f", over {args.seconds:g} s)" if args.seconds else ", at once)"),
            measured=fmt_ms(longest),
            target=f"≤ {TARGET_MS:.0f} ms",
            passed=longest <= TARGET_MS and figures["last_line_shown"],
            figures=figures,
            note=args.label,
        )
    )


if __name__ == "__main__":
    main()
