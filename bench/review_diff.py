"""The Reviews tab: a task whose branch adds 5,000 lines — from asking for its diff to the diff painted.

A git project (`_common.make_project(git=True)`) gets one task in review: a real session commit on its
own branch adds `--lines` lines of Python over `--files` files. The window is built offscreen on it and
shows the Inbox's Reviews tab. Each run empties the diff, then the clock runs from the request the tab
makes when a task is chosen (`sig_diff_requested`) — through the worker (`git diff` of the branch
against its base, parsing, finding each file's lexer), the rows laid out on the GUI thread — to the end
of the first paint of the diff with rows in it. The first run is the tab's own when the window opens:
its request waits behind the window's first reads on the worker, and Pygments loads its lexers then;
the figure is the median of the runs after it.

    python bench/review_diff.py [--lines 5000] [--files 10] [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from _common import Row, emit, fmt_ms, guard_pyside_refcounts, make_project, ms, say, scratch_dir

TARGET_MS = 300.0


def put_in_review(root: Path, lines: int, files: int) -> int:
    """Task 1 in review after one session that added `lines` lines over `files` files on its branch."""
    from ralph_desk.domain.enums import Recipe, TaskStatus, Verb
    from ralph_desk.domain.lifecycle import Mover
    from ralph_desk.project import ProjectPaths
    from ralph_desk.services.container import Services

    services = Services.open(ProjectPaths.at(root))
    try:
        task = services.tasks.get(1)
        worktree = services.workspaces.prepare(task.id, task.title)
        assert worktree is not None, "the bench project is not a git repository"
        services.sessions.start_session("bench-1", task.id, Recipe.TASK_EXECUTION, "claude")
        per_file = lines // files // 2
        for number in range(files):
            body = "".join(
                f"def tide_{number}_{n}(height: float) -> float:  # station {n}\n"
                f"    return height * {n} + 0.5\n"
                for n in range(per_file)
            )
            (worktree.path / f"harbour_{number}.py").write_text(body)
        commit = services.workspaces.commit_session(worktree, task.title, "bench-1", "done", "tides", True)
        services.sessions.finish_session("bench-1", head_after=commit.after, outcome="done")
        services.signals.record(task.id, "bench-1", Verb.DONE, summary="Added the harbour tide functions")
        services.tasks.move(task.id, TaskStatus.IN_REVIEW, Mover.IMPORT)
        return task.id
    finally:
        services.close()


def measure(root: Path, task_id: int, runs: int) -> dict[str, Any]:
    from PySide6.QtCore import QEvent, QEventLoop, QObject, QSettings

    from ralph_desk.app import build_window, prepare_application
    from ralph_desk.gui.panes.inbox.pane import REVIEWS
    from ralph_desk.project import ProjectPaths
    from ralph_desk.services.container import Services

    app = prepare_application(["ralph-desk-bench"])
    services = Services.open(ProjectPaths.at(root))
    settings = QSettings(str(Path(tempfile.mkdtemp()) / "settings.ini"), QSettings.Format.IniFormat)
    window = build_window(services, settings=settings, use_tray=False, live=False)
    window.resize(1360, 860)
    window.show()
    window.show_pane("inbox")
    window.inbox.show_tab(REVIEWS)
    view = window.inbox.reviews
    diff = view.detail.diff
    stamps: dict[str, float] = {}

    class PaintWatch(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint and diff.model.rowCount() > 0 and "painted" not in stamps:
                stamps["painted"] = time.perf_counter()
            return False

    shown = view.show_diff

    def timed_show(*args: Any) -> None:
        stamps["delivered"] = time.perf_counter()
        shown(*args)
        stamps["laid_out"] = time.perf_counter()

    view.show_diff = timed_show  # type: ignore[method-assign]
    view.sig_diff_requested.connect(lambda *_: stamps.setdefault("asked", time.perf_counter()))
    watch = PaintWatch()
    diff.lines.viewport().installEventFilter(watch)

    def wait(done: str, seconds: float = 60) -> None:
        deadline = time.perf_counter() + seconds
        while done not in stamps and time.perf_counter() < deadline:
            app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
        if done not in stamps:
            raise RuntimeError(f"the diff was not {done}")
        stamps["usable"] = time.perf_counter()  # the event-loop turn that painted has finished

    totals: list[float] = []
    worker: list[float] = []
    gui: list[float] = []
    for run in range(runs):
        if run:  # the first run is the tab's own: it chose the task in review and asked for its diff
            diff.show_files([])
            app.processEvents()
            stamps.clear()
            view.sig_diff_requested.emit(task_id, "")
        wait("painted")
        totals.append(stamps["usable"] - stamps["asked"])
        worker.append(stamps["delivered"] - stamps["asked"])
        gui.append(stamps["usable"] - stamps["delivered"])
    figures = {
        "rows": diff.model.rowCount(),
        "files": len(diff.files),
        "added": sum(item.added for item in diff.files),
        "total_s": totals,
        "worker_s": worker,
        "gui_s": gui,
    }
    diff.lines.viewport().removeEventFilter(watch)
    window.close()
    services.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=5000)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    guarded = guard_pyside_refcounts()
    if guarded:
        say(guarded)
    with scratch_dir("review") as folder:
        root = make_project(folder / "project", tasks=3, git=True)
        task_id = put_in_review(root, args.lines, args.files)
        figures = measure(root, task_id, args.runs + 1)
    cold, warm = figures["total_s"][0], figures["total_s"][1:]
    median = statistics.median(warm)
    worker = statistics.median(figures["worker_s"][1:])
    gui = statistics.median(figures["gui_s"][1:])
    say(
        f"{figures['added']} lines added over {figures['files']} files ({figures['rows']} rows); "
        f"request → painted: cold {fmt_ms(ms(cold))}, then median {fmt_ms(ms(median))} "
        f"(worker: git diff + parse {fmt_ms(ms(worker))}; GUI: lay out + first paint {fmt_ms(ms(gui))})"
    )
    emit(
        Row(
            key="review_diff",
            what=f"Reviews tab: diff of a {args.lines:,}-line change, request → painted (median)",
            measured=f"{fmt_ms(ms(median))} (first, cold: {fmt_ms(ms(cold))})",
            target=f"≤ {TARGET_MS:.0f} ms",
            passed=ms(median) <= TARGET_MS,
            figures=figures,
            note=(
                f"git diff + parse on the worker {fmt_ms(ms(worker))}, rows laid out and painted on the "
                f"GUI thread {fmt_ms(ms(gui))}; {figures['rows']} rows, only those in sight are painted"
            ),
        )
    )


if __name__ == "__main__":
    main()
