"""Render each pane of the window on the demo project into docs/screenshots/ (light, and a few dark).

    QT_QPA_PLATFORM=offscreen python scripts/screenshots.py [--out docs/screenshots] [--size 1280x720]

Runs offscreen by default; under Xvfb (`xvfb-run -s '-screen 0 1400x900x24' python scripts/screenshots.py`)
the same code draws through a real X server.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

if "DISPLAY" not in os.environ:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEventLoop, QSettings
from PySide6.QtWidgets import QApplication

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ralph_desk.app import build_window, prepare_application
from ralph_desk.demo import create_demo
from ralph_desk.gui import icons, theme
from ralph_desk.gui.dialogs.connect import HTTP, ConnectDialog
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.panes.disciplines.pane import TOOLS
from ralph_desk.gui.panes.inbox.pane import FLAGS, QUESTIONS, REVIEWS, SUGGESTIONS
from ralph_desk.gui.panes.tasks.detail import ACTIVITY
from ralph_desk.project import ProjectPaths
from ralph_desk.services.container import Services
from tests.support.reviews import make_git_project, put_in_review

WIDTH, HEIGHT = 1400, 900
SELECTED_TASK = 5
SELECTED_FLAG_ROW = 0
SELECTED_FEATURE = "tide-data"
SELECTED_DISCIPLINE = "docs"
SHOWN_TOOL = "read_progress"  # the signal verbs below it, two of them taken away by docs
CONNECT_SIZE = (880, 560)
REVIEWED_TASK = "Mark high and low water on the chart"
CHART = """\"\"\"The tide chart: the curve of one station's heights over seven days.\"\"\"

from tidewater.predict import predictions


def extremes(heights):
    \"\"\"The high and low waters: each turning point of the curve.\"\"\"
    turns = []
    for before, here, after in zip(heights, heights[1:], heights[2:]):
        if (here.metres - before.metres) * (after.metres - here.metres) < 0:
            turns.append(here)
    return turns


def marks(station, days=7):
    \"\"\"A label for each high and low water, placed above or below the curve.\"\"\"
    heights = predictions(station, days=days)
    return [
        {"at": turn.time, "label": f"{turn.metres:.1f} m", "above": turn.metres > station.mean}
        for turn in extremes(heights)
    ]
"""

Scene = Callable[[MainWindow], None]


def _inbox(tab: int) -> Scene:
    def arrange(window: MainWindow) -> None:
        window.show_pane("inbox")
        window.inbox.show_tab(tab)
        if tab == FLAGS:
            window.inbox.flags.select_row(SELECTED_FLAG_ROW)

    return arrange


def _reviews(window: MainWindow) -> None:
    window.show_pane("inbox")
    window.inbox.show_tab(REVIEWS)
    diff = window.inbox.reviews.detail.diff
    deadline = time.monotonic() + 30
    while diff.model.rowCount() == 0 and time.monotonic() < deadline:  # read on the window's worker
        QApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)


def _put_work_in_review(root: Path, services: Services) -> None:
    """The demo as a git repository, with one task's two sessions of work waiting in review."""
    make_git_project(root)
    task = next(task.id for task in services.tasks.list() if task.title.startswith(REVIEWED_TASK))
    first = {
        "tidewater/chart.py": CHART.replace(', "above": turn.metres > station.mean', ""),
        "docs/marks.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
    }
    second = {"tidewater/chart.py": CHART}
    put_in_review(
        services,
        task,
        (first, "Marked each high and low water on the chart with its height"),
        (second, "Labels above the curve for high water, below for low water"),
    )
    services.reviews.add_comment(
        task, "Round to one decimal as the question decided", "tidewater/chart.py", 19
    )


def _tasks(tab: int | None = None) -> Scene:
    def arrange(window: MainWindow) -> None:
        window.show_pane("tasks")
        window.tasks.select_task(SELECTED_TASK)
        if tab is not None:
            window.tasks.detail.tabs.setCurrentIndex(tab)
            if tab == ACTIVITY:
                window.tasks.detail.timeline.selectRow(0)

    return arrange


def _pane(key: str) -> Scene:
    return lambda window: window.show_pane(key)


def _features(window: MainWindow) -> None:
    window.show_pane("features")
    window.features.select_feature(SELECTED_FEATURE)


def _disciplines(window: MainWindow) -> None:
    window.show_pane("disciplines")
    window.disciplines.select_discipline(SELECTED_DISCIPLINE)
    window.disciplines.detail.tabs.setCurrentIndex(TOOLS)
    window.disciplines.detail.tools.view.show_tool(SHOWN_TOOL)


def _connect(window: MainWindow, app: QApplication, out: Path) -> Path:
    """The Connect-a-client dialog, Claude Code over HTTP (a picture of its own: it is not in the window)."""
    dialog = ConnectDialog(window.root, "http://127.0.0.1:49152/mcp")
    dialog.choose("claude", HTTP)
    dialog.resize(*CONNECT_SIZE)
    dialog.show()
    _settle(app)
    path = out / "connect.png"
    dialog.grab().save(str(path))
    dialog.close()
    dialog.deleteLater()
    _settle(app)
    return path


SCENES: dict[str, Scene] = {
    "inbox": _inbox(QUESTIONS),
    "inbox-suggestions": _inbox(SUGGESTIONS),
    "inbox-flags": _inbox(FLAGS),
    "inbox-reviews": _reviews,
    "tasks": _tasks(),
    "tasks-activity": _tasks(ACTIVITY),
    "dashboard": _pane("dashboard"),
    "features": _features,
    "disciplines": _disciplines,
    "loop": _pane("loop"),
}
DARK_SCENES = ("inbox", "tasks", "dashboard")


def _settle(app: QApplication) -> None:
    for _ in range(3):
        app.processEvents()


def _render(
    window: MainWindow, app: QApplication, names: tuple[str, ...], out: Path, suffix: str
) -> list[Path]:
    written = []
    for name in names:
        SCENES[name](window)
        _settle(app)
        path = out / f"{name}{suffix}.png"
        window.grab().save(str(path))
        written.append(path)
    return written


def _apply_scheme(app: QApplication, window: MainWindow, scheme: theme.Scheme) -> None:
    theme.force_scheme(scheme)
    app.setPalette(theme.palette(scheme))
    icons.clear_cache()
    theme.restyle_all()
    window.refresh_style()
    if window.controller is not None:
        window.controller.refresh_all()
    _settle(app)


def _size(text: str) -> tuple[int, int]:
    width, _, height = text.lower().partition("x")
    try:
        return int(width), int(height)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not WIDTHxHEIGHT: {text}") from None


def main(argv: list[str] | None = None) -> int:
    """Render the screenshots; print where they went."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/screenshots"), help="where to write the PNGs")
    parser.add_argument("--no-dark", action="store_true", help="skip the dark-scheme pictures")
    parser.add_argument(
        "--size", type=_size, default=(WIDTH, HEIGHT), help=f"window size (default {WIDTH}x{HEIGHT})"
    )
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    app = prepare_application([sys.argv[0]])
    with tempfile.TemporaryDirectory(prefix="ralph-desk-shots-") as scratch:
        root = create_demo(Path(scratch) / "tidewater").root
        services = Services.open(ProjectPaths.at(root))
        _put_work_in_review(root, services)
        settings = QSettings(str(Path(scratch) / "settings.ini"), QSettings.Format.IniFormat)
        try:
            theme.force_scheme(theme.Scheme.LIGHT)
            app.setPalette(theme.palette(theme.Scheme.LIGHT))
            window = build_window(
                services, settings=settings, mcp_url="http://127.0.0.1:49152/mcp", use_tray=False
            )
            window.resize(*args.size)
            window.show()
            _settle(app)
            written = _render(window, app, tuple(SCENES), args.out, "")
            written.append(_connect(window, app, args.out))
            if not args.no_dark:
                _apply_scheme(app, window, theme.Scheme.DARK)
                written += _render(window, app, DARK_SCENES, args.out, "-dark")
            window.close()
        finally:
            services.close()
            theme.force_scheme(None)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
