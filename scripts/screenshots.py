"""Render each pane of the window on the demo project into docs/screenshots/ (light, and a few dark).

    python scripts/screenshots.py [--out docs/screenshots] [--size 1280x720] [--xvfb] [--matrix DIR]

`--xvfb` starts a private X server (Xvfb) with a window manager (openbox) and draws through them, as a
person's desktop would; without it and without a DISPLAY it draws offscreen. Every run also shows every
pane, tab and dialog at 1024×640, 1280×720 and 1920×1080 in light and dark, and fails (exit 1) naming any
label, button or tab title that is cut off; `--matrix DIR` keeps those pictures in DIR.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from PySide6.QtCore import QEventLoop, QSettings
from PySide6.QtWidgets import QApplication, QWidget

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ralph_desk.app import build_window, prepare_application
from ralph_desk.demo import create_demo
from ralph_desk.demo_review import put_in_review
from ralph_desk.domain.checks import Check, CheckPurpose
from ralph_desk.domain.enums import Recipe, SessionOutcome, TaskStatus
from ralph_desk.domain.lifecycle import Mover
from ralph_desk.gui import icons, theme
from ralph_desk.gui.clipping import clipped_texts
from ralph_desk.gui.dialogs.connect import HTTP, ConnectDialog
from ralph_desk.gui.main_window import MainWindow
from ralph_desk.gui.panes.disciplines.pane import TOOLS
from ralph_desk.gui.panes.inbox.pane import FAILED, FLAGS, QUESTIONS, REVIEWS, SUGGESTIONS
from ralph_desk.gui.panes.loop.running import RunningRow, also_running
from ralph_desk.gui.panes.loop.state import LoopView, Phase
from ralph_desk.gui.panes.tasks.detail import ACTIVITY
from ralph_desk.loop.transcript import STDERR_PREFIX
from ralph_desk.project import ProjectConfig, ProjectPaths, update_config
from ralph_desk.services.container import Services
from ralph_desk.vcs.initialise import make_repository

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

# The chart before the task: the high and low waters found, not yet marked (the diff opens on the marks,
# the unchanged lines above them a click away).
CHART_BASE = CHART[: CHART.index("\n\ndef marks")] + "\n"
CRASHED_TASK = "Import the Admiralty's secondary-port offsets"
CRASH_TRIES = 3
# What the loop writes as the reason when an agent's process fails: its exit code, its last stderr lines.
CRASH = (
    "the agent exited with code 1; its standard error ended with:\n"
    'API Error: 401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}\n'
    "Please run /login to sign in again."
)

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
    detail = window.inbox.reviews.detail
    deadline = time.monotonic() + 30
    while (  # read on the window's worker
        detail.diff.model.rowCount() == 0 or not detail.checks.buttons
    ) and time.monotonic() < deadline:
        QApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)
    if detail.checks.buttons and detail.checks.shown_name is None:
        detail.checks.buttons[0].click()  # the failing check's output
        while "FAILED" not in detail.checks.output.text() and time.monotonic() < deadline:
            QApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)


# The demo's checks: tests fail after the task's done (the Reviews tab shows why), lint passes, types
# never ran.
PYTEST_OUTPUT = (
    "tests/test_chart.py::test_extremes PASSED",
    "tests/test_chart.py::test_marks_above_high_water PASSED",
    "tests/test_chart.py::test_marks_round_to_one_decimal FAILED",
    "",
    "    def test_marks_round_to_one_decimal():",
    ">       assert marks(STATION)[0].label == '4.2 m'",
    "E       AssertionError: assert '4.23 m' == '4.2 m'",
    "",
    "FAILED tests/test_chart.py::test_marks_round_to_one_decimal - AssertionError",
    "1 failed, 2 passed in 0.41s",
)
DEMO_CHECKS = (
    Check(
        name="tests",
        run=f"{sys.executable} -c \"exec(bytes.fromhex('"
        + f"import sys; print({chr(10).join(PYTEST_OUTPUT)!r}); sys.exit(1)".encode().hex()
        + "').decode())\"",
        timeout_s=600,
    ),
    Check(name="lint", run=f"{sys.executable} -c \"print('All checks passed!')\"", timeout_s=120),
    Check(name="types", run=f"{sys.executable} -c \"print('Success')\"", timeout_s=300, required=False),
)


def _crash_a_task(services: Services) -> None:
    """A task whose agent crashed on each of its three tries (the stuck limit): the loop gave it up."""
    feature, discipline = services.features.list()[0].name, services.disciplines.list()[0].name
    task = services.tasks.create(feature, discipline, CRASHED_TASK)
    for attempt in range(1, CRASH_TRIES + 1):
        session = f"crash-{task.id}-{attempt}"
        started = datetime.now(UTC) - timedelta(minutes=4 * (CRASH_TRIES - attempt) + 1)
        transcript = services.paths.logs_dir / f"{started:%Y%m%d-%H%M%S}_{session}.log"
        said = CRASH.split("\n")[1:]  # what the agent wrote on its standard error, as the transcript keeps it
        transcript.write_text("".join(f"{STDERR_PREFIX}{line}\n" for line in said), encoding="utf-8")
        services.sessions.start_session(
            session,
            task.id,
            Recipe.TASK_EXECUTION,
            "claude",
            "sonnet",
            started_at=started,
            transcript_path=transcript.relative_to(services.paths.root).as_posix(),
        )
        services.sessions.finish_session(
            session, exit_code=1, outcome=SessionOutcome.STUCK.value, error=CRASH
        )
        services.tasks.increment_stuck(task.id)
    services.tasks.move(task.id, TaskStatus.FAILED, Mover.LOOP)


def _put_work_in_review(root: Path, services: Services) -> None:
    """The demo as a git repository, with one task's two sessions of work in review, its checks run."""
    (root / "tidewater").mkdir(exist_ok=True)
    (root / "tidewater" / "chart.py").write_text(CHART_BASE, encoding="utf-8")
    make_repository(root, "main")
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
    update_config(services.paths, checks=[check.model_dump() for check in DEMO_CHECKS])
    worktree = services.workspaces.existing(task)
    if worktree is not None:
        session = f"review-{task}-2"
        services.checks.run(
            DEMO_CHECKS[:2], worktree.path, purpose=CheckPurpose.SESSION, task_id=task, session_id=session
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


# What three sessions at once are doing in the Loop pane's picture: task number, minutes, turns, cost,
# the latest action and the state it leaves the session in.
RUNNING = (
    (4, 7, 12, 0.61, "Edit tidewater/stations.py: parse the secondary-port offsets", "calling a tool"),
    (11, 4, 6, 0.29, "Bash pytest tests/test_chart.py", "waiting for the model"),
    (16, 1, 2, 0.06, "Reading the task and its context files first.", "writing"),
)


_LOOP_SHOWN: list[tuple[LoopView, ProjectConfig]] = []  # the pane's own state and settings, while staged
STAGED_PARALLEL = len(RUNNING)


def _loop(glance: bool) -> Scene:
    """The Loop pane as it is, or as if three sessions ran at once (shown at a glance)."""

    def arrange(window: MainWindow) -> None:
        pane = window.loop
        window.show_pane("loop")
        pane.sessions.show_glance(False)
        pane.show_running([], None)
        if _LOOP_SHOWN:
            view, config = _LOOP_SHOWN.pop()
            pane.show_view(view)
            pane.settings.load(config)
        if not glance:
            return
        # The form shows the settings the staged sessions run with (loaded, so not an unsaved edit).
        config = pane.settings.values()
        _LOOP_SHOWN.append((pane.view, config))
        pane.settings.load(config.changed(parallel=STAGED_PARALLEL))
        agent = str(pane.settings.agent.currentData())
        assert window.controller is not None
        titles = window.controller.directory
        now = datetime.now(UTC)
        rows = [
            RunningRow(
                f"demo-{task}",
                f"#{task} {titles.title(task)}",
                agent,
                now - timedelta(minutes=minutes),
                turns,
                cost,
                action,
                state,
            )
            for task, minutes, turns, cost, action, state in RUNNING
        ]
        task = f"{rows[0].title} · {also_running([row.title for row in rows[1:]])}"
        pane.show_view(replace(pane.view, phase=Phase.RUNNING, task=task, iteration=9, cost_usd=3.12))
        pane.show_running(rows, rows[0].session_id)
        pane.sessions.show_glance(True)

    return arrange


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


MATRIX_SIZES = ((1024, 640), (1280, 720), (1920, 1080))
START_TIMEOUT_S = 30


def _views(window: MainWindow) -> Iterator[str]:
    """Show every pane and every tab of the tabbed ones; yield a name for what is shown."""
    for name in ("dashboard", "features", "disciplines", "loop"):
        SCENES[name](window)
        yield name
    SCENES["loop-sessions"](window)
    yield "loop-sessions"
    SCENES["loop"](window)
    window.show_pane("inbox")
    for index in range(window.inbox.tabs.count()):
        window.inbox.show_tab(index)
        yield f"inbox-{index}"
    _tasks()(window)
    for index in range(window.tasks.detail.tabs.count()):
        window.tasks.detail.tabs.setCurrentIndex(index)
        yield f"tasks-{index}"


def _merge_anyway(window: MainWindow) -> QWidget | None:
    """The question Approve & merge asks when the task's required checks fail."""
    reviews = window.inbox.reviews
    current = reviews.current
    if current is None:
        return None
    reviews.ask_merge_anyway(current.task_id, reviews.pin or "", "tests failed")
    return reviews.dialog


def _dialogs(window: MainWindow) -> Iterator[tuple[str, QWidget]]:
    """Open each dialog in turn; yield its name and the dialog (closed after)."""
    controller = window.controller
    assert controller is not None
    openers: list[tuple[str, Callable[[], QWidget | None]]] = [
        ("new-task", lambda: (controller.tasks.new_task(), controller.tasks.task_dialog)[1]),
        ("shortcuts", lambda: (window.show_shortcuts(), window.shortcuts_dialog)[1]),
        ("connect", lambda: (controller.show_connect(), controller.connect_dialog)[1]),
        ("merge-anyway", lambda: _merge_anyway(window)),
    ]
    for name, open_dialog in openers:
        dialog = open_dialog()
        if dialog is not None:
            yield name, dialog
            dialog.close()


def _check_sizes(app: QApplication, window: MainWindow, matrix: Path | None) -> list[str]:
    """Every view and dialog at each size, light and dark: what is cut off (pictures kept in `matrix`)."""
    problems: list[str] = []
    for scheme in (theme.Scheme.LIGHT, theme.Scheme.DARK):
        _apply_scheme(app, window, scheme)
        for width, height in MATRIX_SIZES:
            window.resize(width, height)
            tag = f"{width}x{height}-{scheme.value}"
            for name in _views(window):
                _settle(app, window)
                problems += [f"{tag} {name}: {found}" for found in clipped_texts(window)]
                if matrix is not None:
                    window.grab().save(str(matrix / f"{name}-{tag}.png"))
            for name, dialog in _dialogs(window):
                _settle(app)
                problems += [f"{tag} {name}: {found}" for found in clipped_texts(dialog)]
                if matrix is not None and width == MATRIX_SIZES[0][0]:
                    dialog.grab().save(str(matrix / f"dialog-{name}-{scheme.value}.png"))
    return problems


@contextmanager
def _x_server(size: tuple[int, int]) -> Iterator[None]:
    """A private Xvfb display with openbox managing its windows; DISPLAY points at it meanwhile."""
    for program in ("Xvfb", "openbox"):
        if shutil.which(program) is None:
            raise SystemExit(f"--xvfb needs {program} (Debian: apt-get install xvfb openbox)")
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", "1", "-screen", "0", f"{size[0]}x{size[1]}x24", "-nolisten", "tcp"],
        stdout=subprocess.PIPE,
        text=True,
    )
    started = [server]
    try:
        assert server.stdout is not None
        display = f":{server.stdout.readline().strip()}"
        env = {**os.environ, "DISPLAY": display}
        # openbox runs its --startup command once it manages the screen: that line says it is ready.
        manager = subprocess.Popen(
            ["openbox", "--sm-disable", "--startup", "echo ready"], env=env, stdout=subprocess.PIPE, text=True
        )
        started.append(manager)
        assert manager.stdout is not None
        if "ready" not in (line.strip() for line in manager.stdout):  # openbox prints its notes there too
            raise SystemExit("openbox did not start")
        os.environ["DISPLAY"], os.environ["QT_QPA_PLATFORM"] = display, "xcb"
        yield
    finally:
        for process in reversed(started):
            process.terminate()
            process.wait(timeout=START_TIMEOUT_S)


SCENES: dict[str, Scene] = {
    "inbox": _inbox(QUESTIONS),
    "inbox-suggestions": _inbox(SUGGESTIONS),
    "inbox-flags": _inbox(FLAGS),
    "inbox-reviews": _reviews,
    "inbox-failed": _inbox(FAILED),
    "tasks": _tasks(),
    "tasks-activity": _tasks(ACTIVITY),
    "dashboard": _pane("dashboard"),
    "features": _features,
    "disciplines": _disciplines,
    "loop": _loop(glance=False),
    "loop-sessions": _loop(glance=True),
}
DARK_SCENES = ("inbox", "tasks", "dashboard")


SETTLE_S = 20.0


def _settle(app: QApplication, window: MainWindow | None = None) -> None:
    """Let the window draw, and (given it) read what its panes asked for: until its worker is idle."""
    for _ in range(3):
        app.processEvents()
    controller = window.controller if window is not None else None
    if controller is None:
        return
    until = time.monotonic() + SETTLE_S
    while time.monotonic() < until:
        app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)
        if controller.worker.idle:
            app.processEvents()
            if controller.worker.idle:
                return


def _render(
    window: MainWindow, app: QApplication, names: tuple[str, ...], out: Path, suffix: str
) -> list[Path]:
    written = []
    for name in names:
        SCENES[name](window)
        _settle(app, window)
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
    _settle(app, window)


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
    parser.add_argument("--xvfb", action="store_true", help="draw on a private Xvfb with openbox")
    parser.add_argument("--matrix", type=Path, help="keep every size × scheme picture in this folder")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.matrix is not None:
        args.matrix.mkdir(parents=True, exist_ok=True)
    if args.xvfb:
        with _x_server((1920, 1200)):
            return _run(args)
    if "DISPLAY" not in os.environ:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    """Render the README's pictures, then check every size and scheme."""
    app = prepare_application([sys.argv[0]])
    with tempfile.TemporaryDirectory(prefix="ralph-desk-shots-") as scratch:
        root = create_demo(Path(scratch) / "tidewater").root
        services = Services.open(ProjectPaths.at(root))
        _put_work_in_review(root, services)
        _crash_a_task(services)
        settings = QSettings(str(Path(scratch) / "settings.ini"), QSettings.Format.IniFormat)
        try:
            theme.force_scheme(theme.Scheme.LIGHT)
            app.setPalette(theme.palette(theme.Scheme.LIGHT))
            window = build_window(
                services, settings=settings, mcp_url="http://127.0.0.1:49152/mcp", use_tray=False
            )
            window.resize(*args.size)
            window.show()
            _settle(app, window)
            written = _render(window, app, tuple(SCENES), args.out, "")
            written.append(_connect(window, app, args.out))
            if not args.no_dark:
                _apply_scheme(app, window, theme.Scheme.DARK)
                written += _render(window, app, DARK_SCENES, args.out, "-dark")
            problems = _check_sizes(app, window, args.matrix)
            window.close()
        finally:
            services.close()
            theme.force_scheme(None)
    for path in written:
        print(path)
    for problem in problems:
        print(f"cut off: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
