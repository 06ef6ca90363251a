"""Row 7: the window on a project with 10,000 tasks and 50,000 signals — usable in how long, at what memory.

`--tasks 50000 --signals 500000` measures the big project of row 7b the same way.

Runs in a process of its own (so that peak memory is the window's), offscreen. The project is made
first by `big_project.py` (timed separately, and kept in the cache folder for the next run). The
clock runs from the `ralph_desk.app.build_window(services, ...)` call — which builds every pane and
reads everything they show — through showing the Tasks pane, to the end of the first paint of the
task table with rows in it. Importing Qt, making the QApplication and opening the services are
reported separately; peak memory is the process's ru_maxrss at the end.

    python bench/window_open.py [--tasks 10000] [--signals 50000] [--cache DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from _common import Row, emit, fmt_ms, guard_pyside_refcounts, ms, say

TARGET_S = 2.0
TARGET_RSS_MB = 300.0
TABLE_STEP_TARGET_S = 1.0
DEFAULT_CACHE = Path(tempfile.gettempdir()) / "ralph-bench-cache"


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(root: Path) -> dict[str, Any]:
    figures: dict[str, Any] = {"rss_start_mb": rss_mb()}
    start = time.perf_counter()
    from PySide6.QtCore import QEvent, QEventLoop, QObject, QSettings

    from ralph_desk.app import build_window, prepare_application
    from ralph_desk.project import ProjectPaths
    from ralph_desk.services.container import Services

    figures["import_s"] = time.perf_counter() - start
    start = time.perf_counter()
    app = prepare_application(["ralph-desk-bench"])
    figures["application_s"] = time.perf_counter() - start
    start = time.perf_counter()
    services = Services.open(ProjectPaths.at(root))
    figures["services_open_s"] = time.perf_counter() - start
    settings_dir = Path(tempfile.mkdtemp(prefix="ralph-bench-settings-"))
    settings = QSettings(str(settings_dir / "settings.ini"), QSettings.Format.IniFormat)
    figures["rss_before_window_mb"] = rss_mb()

    painted: list[float] = []

    class PaintWatch(QObject):
        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint and self.model.rowCount() > 0 and not painted:
                painted.append(time.perf_counter())
            return False

    start = time.perf_counter()
    cpu_start = time.process_time()
    window = build_window(services, settings=settings, use_tray=False)
    built = time.perf_counter()
    watch = PaintWatch(window.tasks.proxy)
    window.tasks.table.viewport().installEventFilter(watch)
    window.show_pane("tasks")
    window.resize(1280, 800)
    window.show()
    deadline = time.perf_counter() + 60
    while not painted and time.perf_counter() < deadline:
        app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)
    usable = time.perf_counter()  # the event-loop turn that painted the table has finished
    cpu_used = time.process_time() - cpu_start
    if not painted:
        raise RuntimeError("the task table was never painted with rows")
    figures.update(
        build_window_s=built - start,
        usable_s=usable - start,
        usable_cpu_s=cpu_used,
        first_paint_s=painted[0] - start,
        rows=window.tasks.model.rowCount(),
        rss_peak_mb=rss_mb(),
    )
    window.tasks.table.viewport().removeEventFilter(watch)
    figures.update(table_steps(window))
    if window.controller is not None:
        window.controller.feed.stop()
    window.close()
    services.close()
    shutil.rmtree(settings_dir, ignore_errors=True)
    return figures


def table_steps(window: Any) -> dict[str, float]:
    """How long a person waits on the task table: filter to pending, sort by priority, read it all again."""
    from PySide6.QtCore import Qt

    from ralph_desk.gui.models.tasks import PRIORITY

    pane = window.tasks
    start = time.perf_counter()
    pane.filters.choose(pane.filters.status, "pending")
    filtered = time.perf_counter() - start
    start = time.perf_counter()
    pane.table.sortByColumn(PRIORITY, Qt.SortOrder.AscendingOrder)
    sorted_in = time.perf_counter() - start
    start = time.perf_counter()
    window.controller.tasks.refresh()
    reread = time.perf_counter() - start
    return {"filter_s": filtered, "sort_s": sorted_in, "reread_s": reread}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--signals", type=int, default=50_000)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    args = parser.parse_args()
    from big_project import ensure_big_project

    guarded = guard_pyside_refcounts()
    if guarded:
        say(guarded)

    start = time.perf_counter()
    root, made = ensure_big_project(args.cache, args.tasks, args.signals)
    making = (
        f"project made in {time.perf_counter() - start:.1f} s (bulk insert {made['bulk_insert_s']:.1f} s)"
        if made
        else f"project reused from {root}"
    )
    say(making)
    figures = measure(root)
    figures["project"] = making
    say(
        f"import Qt + app {figures['import_s']:.2f} s, QApplication {fmt_ms(ms(figures['application_s']))}, "
        f"services open {fmt_ms(ms(figures['services_open_s']))}"
    )
    say(
        f"build_window {fmt_ms(ms(figures['build_window_s']))}; tasks table painted with "
        f"{figures['rows']} rows at {fmt_ms(ms(figures['usable_s']))} after the build_window call "
        f"(CPU {fmt_ms(ms(figures['usable_cpu_s']))})"
    )
    say(
        f"peak memory (ru_maxrss) {figures['rss_peak_mb']:.0f} MB "
        f"(before the window: {figures['rss_before_window_mb']:.0f} MB)"
    )
    say(
        f"on the task table: filter to pending {fmt_ms(ms(figures['filter_s']))}, sort by priority "
        f"{fmt_ms(ms(figures['sort_s']))}, read all again {fmt_ms(ms(figures['reread_s']))} "
        f"(target ≤ {fmt_ms(ms(TABLE_STEP_TARGET_S))} each)"
    )
    emit(
        Row(
            key="window_open" if args.tasks == 10_000 else f"window_open_{args.tasks}",
            what=f"window on {args.tasks:,} tasks + {args.signals:,} signals: build_window → table painted",
            measured=f"{figures['usable_s']:.2f} s; peak RSS {figures['rss_peak_mb']:.0f} MB",
            target=f"≤ {TARGET_S:g} s; peak RSS ≤ {TARGET_RSS_MB:.0f} MB",
            passed=figures["usable_s"] <= TARGET_S and figures["rss_peak_mb"] <= TARGET_RSS_MB,
            figures=figures,
            note=(
                f"build_window {fmt_ms(ms(figures['build_window_s']))}, CPU to the painted table "
                f"{figures['usable_cpu_s']:.2f} s; RSS before the window "
                f"{figures['rss_before_window_mb']:.0f} MB; filter {fmt_ms(ms(figures['filter_s']))}, "
                f"sort {fmt_ms(ms(figures['sort_s']))}, re-read {fmt_ms(ms(figures['reread_s']))}; {making}"
            ),
        )
    )


if __name__ == "__main__":
    main()
